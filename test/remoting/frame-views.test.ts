import { describe, expect, it } from 'vitest';
import { type RemotingCommand, joinReceivedBody } from '../../src/remoting/command.js';

const bodyPartsOf = (c: RemotingCommand): Buffer[] | undefined => c.receivedBodyParts;
const bodyLengthOf = (c: RemotingCommand): number =>
  c.receivedBodyParts ? c.receivedBodyParts.reduce((n, p) => n + p.length, 0) : (c.body?.length ?? 0);
/** The body as a processor that needs it whole sees it (RequestDispatcher joins it). */
const wholeBody = (c: RemotingCommand): Buffer | undefined => (joinReceivedBody(c), c.body);
import {
  FrameDecoder, MAX_VIEW_PARTS, SLAB_BYTES, SlabPool, VIEW_MIN_FRAME_BYTES,
} from '../../src/remoting/frame-decoder.js';
import { FrameError } from '../../src/remoting/header-codec.js';

/** A JSON frame as a Java client writes it: length, header length word, header, body. */
function jsonFrame(code: number, opaque: number, body?: Buffer): Buffer {
  const header = Buffer.from(`{"code":${code},"extFields":{"topic":"T"},"flag":0,"language":"JAVA","opaque":${opaque},"serializeTypeCurrentRPC":"JSON","version":395}`);
  const bodyLen = body?.length ?? 0;
  const prefix = Buffer.alloc(8);
  prefix.writeInt32BE(4 + header.length + bodyLen, 0);
  prefix.writeInt32BE(header.length, 4);
  return Buffer.concat([prefix, header, body ?? Buffer.alloc(0)]);
}

function pattern(n: number, seed: number): Buffer {
  const b = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) b[i] = (i * 131 + seed) & 0xff;
  return b;
}

/** Feeds `all` cut at `cuts` (ascending positions) into a fresh decoder; returns the commands and the decoder. */
function feed(all: Buffer, cuts: number[], pool?: SlabPool): { out: RemotingCommand[]; d: FrameDecoder } {
  const d = new FrameDecoder(undefined, pool, true);
  const out: RemotingCommand[] = [];
  let at = 0;
  for (const cut of [...cuts, all.length]) {
    // each chunk a buffer of its own, as a socket hands them out
    d.push(Buffer.from(all.subarray(at, cut)), out);
    at = cut;
  }
  return { out, d };
}

const BODIES = [pattern(64 * 1024, 1), Buffer.from('small'), pattern(VIEW_MIN_FRAME_BYTES, 2), pattern(300 * 1024, 3)];
const FRAMES = BODIES.map((b, i) => jsonFrame(310, i + 1, b));
const ALL = Buffer.concat(FRAMES);

function expectAll(out: RemotingCommand[]): void {
  expect(out.map((c) => c.opaque)).toEqual([1, 2, 3, 4]);
  out.forEach((c, i) => {
    expect(bodyLengthOf(c)).toBe(BODIES[i]!.length);
    const parts = bodyPartsOf(c);
    if (parts) expect(c.body).toBeUndefined();
    expect(wholeBody(c)!.equals(BODIES[i]!)).toBe(true);
  });
}

describe('FrameDecoder: cut frames kept as views of the chunks', () => {
  it('decodes every cut point (one and two cuts), bodies byte-identical', () => {
    // the sweep runs on a ~33 KiB stream (two view-sized frames around a small one); the 400 KiB one is cut below
    const bodies = [pattern(VIEW_MIN_FRAME_BYTES, 5), Buffer.from('mid'), pattern(VIEW_MIN_FRAME_BYTES + 77, 6)];
    const all = Buffer.concat(bodies.map((b, i) => jsonFrame(310, i + 1, b)));
    let split = 0;
    const bad: string[] = [];
    for (let cut = 1; cut < all.length; cut++) {
      const runs = cut % 7 === 0 && cut + 5000 < all.length ? [[cut], [cut, cut + 5000]] : [[cut]];
      for (const cs of runs) {
        const { out, d } = feed(all, cs);
        if (bodyPartsOf(out[0]!)) split++;
        const ok = out.length === 3 && out.every((c, i) => c.opaque === i + 1 && bodyLengthOf(c) === bodies[i]!.length &&
          wholeBody(c)!.equals(bodies[i]!)) && d.bufferedBytes === 0;
        if (!ok) bad.push(cs.join('+'));
      }
    }
    expect(bad).toEqual([]);
    expect(split).toBeGreaterThan(10000); // the views path did run
    for (const cuts of [[100], [70000], [66000, 66100, 200000], [ALL.length - 10]]) expectAll(feed(ALL, cuts).out);
  });

  it('decodes 1-byte chunks (falls back to one copied buffer past MAX_VIEW_PARTS) and 4 KiB chunks', () => {
    const small = Buffer.concat(FRAMES.slice(0, 3));
    const { out } = feed(small, Array.from({ length: small.length - 1 }, (_, i) => i + 1));
    expect(out.map((c) => c.opaque)).toEqual([1, 2, 3]);
    out.forEach((c, i) => expect(wholeBody(c)!.equals(BODIES[i]!)).toBe(true));
    expect(bodyPartsOf(out[0]!)).toBeUndefined();
    const step = 4096;
    const r = feed(ALL, Array.from({ length: Math.floor((ALL.length - 1) / step) }, (_, i) => (i + 1) * step));
    expectAll(r.out);
    expect(MAX_VIEW_PARTS).toBeLessThan(300 * 1024 / step); // the 300 KiB frame took the fall-back path
  });

  it('counts the kept chunks as buffered, and forgets them on release', () => {
    const d = new FrameDecoder();
    const lead = FRAMES[1]!; // a small whole frame, then the start of a 64 KiB one in the same chunk
    d.push(Buffer.concat([lead, FRAMES[0]!.subarray(0, 1000)]), []);
    expect(d.bufferedBytes).toBe(lead.length + 1000);
    d.push(Buffer.from(FRAMES[0]!.subarray(1000, 5000)), []);
    expect(d.bufferedBytes).toBe(lead.length + 5000);
    d.release();
    expect(d.bufferedBytes).toBe(0);
    const out: RemotingCommand[] = [];
    d.push(FRAMES[1]!, out);
    expect(out[0]!.body!.toString()).toBe('small');
  });

  it('keeps frames over SLAB_BYTES on pooled pieces (one joined body)', () => {
    const body = pattern(SLAB_BYTES + 100, 9);
    const f = jsonFrame(310, 7, body);
    const { out, d } = feed(f, [5000, 70000, SLAB_BYTES], new SlabPool(4));
    expect(bodyPartsOf(out[0]!)).toBeUndefined();
    expect(out[0]!.body!.equals(body)).toBe(true);
    expect(d.bufferedBytes).toBe(0);
  });

  it('throws FrameError on garbage after a cut frame and on a bad header length inside one', () => {
    const bad = Buffer.alloc(8);
    bad.writeInt32BE(-5, 0);
    expect(() => feed(Buffer.concat([FRAMES[0]!, bad]), [30000])).toThrow(FrameError);
    const f = Buffer.from(FRAMES[0]!);
    f.writeUInt32BE(0x00ffffff, 4); // header length beyond the frame
    expect(() => feed(f, [30000])).toThrow(FrameError);
    const g = Buffer.from(FRAMES[0]!);
    g.writeUInt32BE(0x07000010, 4); // unknown serialize type
    expect(() => feed(g, [30000])).toThrow(FrameError);
    expect(() => feed(g, [3])).toThrow(FrameError); // cut inside the length field
  });

  it('joins a cut body unless asked to keep pieces, and always for responses', () => {
    const plain = new FrameDecoder();
    const out: RemotingCommand[] = [];
    plain.push(Buffer.from(FRAMES[0]!.subarray(0, 40000)), out);
    plain.push(Buffer.from(FRAMES[0]!.subarray(40000)), out);
    expect(out[0]!.receivedBodyParts).toBeUndefined();
    expect(out[0]!.body!.equals(BODIES[0]!)).toBe(true);
    const res = Buffer.from(FRAMES[0]!);
    const json = res.toString('latin1');
    const at = json.indexOf('"flag":0');
    res.write('"flag":1', at, 'latin1'); // the same frame as a response
    const r = feed(res, [40000]).out[0]!;
    expect(r.flag).toBe(1);
    expect(r.receivedBodyParts).toBeUndefined();
    expect(r.body!.equals(BODIES[0]!)).toBe(true);
    expect(feed(FRAMES[0]!, [40000]).out[0]!.receivedBodyParts).toHaveLength(2);
  });
});
