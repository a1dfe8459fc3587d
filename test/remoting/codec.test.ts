import { describe, expect, it } from 'vitest';
import { type RemotingCommand, createResponse } from '../../src/remoting/command.js';
import { FrameDecoder, MAX_FRAME_BYTES, SLAB_BYTES, SlabPool, decodeFrameBody } from '../../src/remoting/frame-decoder.js';
import { FrameError, encodeFrame, encodeJsonHeader } from '../../src/remoting/header-codec.js';

/** A JSON frame exactly as a Java 4.9.x client writes it (fastjson, keys sorted). */
function javaJsonFrame(headerJson: string, body?: Buffer): Buffer {
  const header = Buffer.from(headerJson, 'utf8');
  const bodyLen = body?.length ?? 0;
  const prefix = Buffer.alloc(8);
  prefix.writeInt32BE(4 + header.length + bodyLen, 0);
  prefix.writeInt32BE(header.length, 4);
  return Buffer.concat([prefix, header, body ?? Buffer.alloc(0)]);
}

/** A ROCKETMQ binary frame laid out by hand from Java's RocketMQSerializable layout. */
function binaryFrame(code: number, opaque: number, ext: Record<string, string>, remark?: string): Buffer {
  const parts: Buffer[] = [];
  const fixed = Buffer.alloc(13);
  fixed.writeInt16BE(code, 0);
  fixed.writeUInt8(9, 2); // GO
  fixed.writeInt16BE(317, 3);
  fixed.writeInt32BE(opaque, 5);
  fixed.writeInt32BE(0, 9);
  parts.push(fixed);
  const r = Buffer.from(remark ?? '', 'utf8');
  const rl = Buffer.alloc(4);
  rl.writeInt32BE(r.length);
  parts.push(rl, r);
  const extParts: Buffer[] = [];
  for (const [k, v] of Object.entries(ext)) {
    const kb = Buffer.from(k);
    const vb = Buffer.from(v);
    const kl = Buffer.alloc(2);
    kl.writeInt16BE(kb.length);
    const vl = Buffer.alloc(4);
    vl.writeInt32BE(vb.length);
    extParts.push(kl, kb, vl, vb);
  }
  const extBuf = Buffer.concat(extParts);
  const el = Buffer.alloc(4);
  el.writeInt32BE(extBuf.length);
  parts.push(el, extBuf);
  const header = Buffer.concat(parts);
  const prefix = Buffer.alloc(8);
  prefix.writeInt32BE(4 + header.length, 0);
  prefix.writeInt32BE((1 << 24) | header.length, 4);
  return Buffer.concat([prefix, header]);
}

const JAVA_ROUTE_REQUEST =
  '{"code":105,"extFields":{"topic":"T"},"flag":0,"language":"JAVA","opaque":1,"serializeTypeCurrentRPC":"JSON","version":401}';

describe('frame decoder', () => {
  it('decodes a Java JSON request', () => {
    const out: RemotingCommand[] = [];
    new FrameDecoder().push(javaJsonFrame(JAVA_ROUTE_REQUEST), out);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ code: 105, language: 'JAVA', opaque: 1, flag: 0, version: 401, extFields: { topic: 'T' } });
    expect(out[0].body).toBeUndefined();
  });

  it('starts with the documented prefix bytes', () => {
    const frame = javaJsonFrame(JAVA_ROUTE_REQUEST);
    const headerLen = Buffer.byteLength(JAVA_ROUTE_REQUEST);
    expect(frame.readInt32BE(0)).toBe(4 + headerLen);
    expect(frame.readInt32BE(4)).toBe(headerLen);
  });

  it('coerces ali-ons raw JS values in extFields to strings', () => {
    const out: RemotingCommand[] = [];
    const h = '{"code":310,"language":"JAVA","opaque":7,"flag":0,"version":121,"remark":null,"extFields":{"e":0,"k":false,"b":"T","g":1700000000000}}';
    new FrameDecoder().push(javaJsonFrame(h, Buffer.from('hi')), out);
    expect(out[0].extFields).toEqual({ e: '0', k: 'false', b: 'T', g: '1700000000000' });
    expect(out[0].remark).toBeUndefined();
    expect(out[0].body?.toString()).toBe('hi');
  });

  it('decodes a ROCKETMQ binary header', () => {
    const out: RemotingCommand[] = [];
    new FrameDecoder().push(binaryFrame(105, 42, { topic: 'T', acceptStandardJsonOnly: 'true' }, 'r'), out);
    expect(out[0]).toMatchObject({ code: 105, language: 'GO', version: 317, opaque: 42, remark: 'r', extFields: { topic: 'T', acceptStandardJsonOnly: 'true' } });
  });

  it('handles a frame split at every byte and many frames per chunk', () => {
    const frames = [javaJsonFrame(JAVA_ROUTE_REQUEST, Buffer.from('abc')), binaryFrame(34, 3, { a: 'b' }), javaJsonFrame(JAVA_ROUTE_REQUEST)];
    const all = Buffer.concat(frames);
    for (let cut = 1; cut < all.length; cut++) {
      const d = new FrameDecoder();
      const out: RemotingCommand[] = [];
      d.push(all.subarray(0, cut), out);
      d.push(all.subarray(cut), out);
      expect(out.map((c) => c.code)).toEqual([105, 34, 105]);
      expect(out[0].body?.toString()).toBe('abc');
      expect(d.bufferedBytes).toBe(0);
    }
    // byte by byte
    const d = new FrameDecoder();
    const out: RemotingCommand[] = [];
    for (const b of all) d.push(Buffer.from([b]), out);
    expect(out).toHaveLength(3);
  });

  it('receives a large frame into pooled pieces, cut anywhere, and hands a dropped one back', () => {
    const pool = new SlabPool(4);
    const body = Buffer.alloc(3 * SLAB_BYTES + 12345);
    for (let i = 0; i < body.length; i++) body[i] = (i * 31) & 0xff;
    const big = javaJsonFrame(JAVA_ROUTE_REQUEST, body);
    const small = binaryFrame(34, 3, { a: 'b' });
    const all = Buffer.concat([small, big, small]);
    for (const step of [1 + 4093, 65536, SLAB_BYTES - 3, SLAB_BYTES + 7]) {
      const d = new FrameDecoder(MAX_FRAME_BYTES, pool);
      const out: RemotingCommand[] = [];
      for (let at = 0; at < all.length; at += step) d.push(all.subarray(at, Math.min(all.length, at + step)), out);
      expect(out.map((c) => c.code)).toEqual([34, 105, 34]);
      expect(out[1].body!.equals(body)).toBe(true);
      expect(d.bufferedBytes).toBe(0);
    }
    expect(pool.freeBytes).toBe(4 * SLAB_BYTES);
    // A frame that never completes: its pieces go back when the connection drops it.
    const d = new FrameDecoder(MAX_FRAME_BYTES, new SlabPool(8));
    d.push(big.subarray(0, 2 * SLAB_BYTES + 5), []);
    expect(d.bufferedBytes).toBe(2 * SLAB_BYTES + 5);
    const p2 = (d as unknown as { pool: SlabPool }).pool;
    expect(p2.freeBytes).toBe(0);
    d.release();
    expect([d.bufferedBytes, p2.freeBytes]).toEqual([0, 3 * SLAB_BYTES]);
  });

  it('keeps earlier bodies intact when later chunks arrive', () => {
    const d = new FrameDecoder();
    const out: RemotingCommand[] = [];
    const f1 = javaJsonFrame(JAVA_ROUTE_REQUEST, Buffer.from('first-body'));
    const f2 = javaJsonFrame(JAVA_ROUTE_REQUEST, Buffer.from('second-body'));
    const both = Buffer.concat([f1, f2]);
    d.push(both.subarray(0, f1.length + 5), out);
    d.push(both.subarray(f1.length + 5), out);
    expect(out.map((c) => c.body?.toString())).toEqual(['first-body', 'second-body']);
  });

  it('rejects an oversize declared length before buffering it', () => {
    const b = Buffer.alloc(8);
    b.writeInt32BE(MAX_FRAME_BYTES, 0);
    expect(() => new FrameDecoder().push(b, [])).toThrow(FrameError);
  });

  it('rejects garbage: negative length, bad serialize type, header past frame end, non-JSON header', () => {
    const neg = Buffer.alloc(8);
    neg.writeInt32BE(-5, 0);
    expect(() => new FrameDecoder().push(neg, [])).toThrow(FrameError);

    const badType = javaJsonFrame('{"code":1}');
    badType.writeUInt8(7, 4);
    expect(() => new FrameDecoder().push(badType, [])).toThrow(FrameError);

    const past = javaJsonFrame('{"code":1}');
    past.writeInt32BE(1000, 4);
    expect(() => new FrameDecoder().push(past, [])).toThrow(FrameError);

    expect(() => new FrameDecoder().push(javaJsonFrame('GET / HTTP/1.1'), [])).toThrow(FrameError);
    expect(() => new FrameDecoder().push(javaJsonFrame('[1,2]'), [])).toThrow(FrameError);
    expect(() => new FrameDecoder().push(javaJsonFrame('{"code":"x"}'), [])).toThrow(FrameError);
  });

  it('rejects truncated binary headers', () => {
    const f = binaryFrame(105, 1, { topic: 'T' });
    // claim a longer extFields block than present
    const headerStart = 8;
    const extLenPos = headerStart + 13 + 4; // after fixed part and empty remark
    f.writeInt32BE(999, extLenPos);
    expect(() => new FrameDecoder().push(f, [])).toThrow(FrameError);
  });
});

describe('frame encoder', () => {
  it('writes strict JSON with type byte 0 that decodes back', () => {
    const res = createResponse(0, undefined, { msgId: 'ABC', queueId: '1' }, Buffer.from('xyz'));
    res.opaque = 99;
    const frame = Buffer.concat(encodeFrame(res));
    expect(frame.readUInt8(4)).toBe(0);
    const headerLen = frame.readInt32BE(4);
    const header = JSON.parse(frame.subarray(8, 8 + headerLen).toString());
    expect(header).toMatchObject({ code: 0, flag: 1, opaque: 99, language: 'JAVA', extFields: { msgId: 'ABC', queueId: '1' } });
    expect(header.remark).toBeUndefined();
    const back = decodeFrameBody(frame.subarray(4));
    expect(back.body?.toString()).toBe('xyz');
  });

  it('writes the header text JSON.stringify writes for the same fields in fastjson\'s order', () => {
    const reference = (c: RemotingCommand) => JSON.stringify({
      code: c.code, extFields: c.extFields, flag: c.flag, language: c.language, opaque: c.opaque,
      ...(c.remark !== undefined && c.remark !== null ? { remark: c.remark } : {}), serializeTypeCurrentRPC: 'JSON', version: c.version,
    });
    const cases: RemotingCommand[] = [
      createResponse(0, undefined, { msgId: 'ABC', queueId: '1' }),
      createResponse(17, 'No topic route "x"\n\u0001 ünïcode 😀', { a: 'q"uote\\', b: '' }),
      { ...createResponse(1), language: 'GO', opaque: -2147483648, version: 0, extFields: { u: undefined as unknown as string } },
      { ...createResponse(1), extFields: undefined as unknown as Record<string, string>, opaque: Number.NaN },
      { ...createResponse(1), remark: null as unknown as string, code: 2 ** 40 },
      createResponse(0, undefined, { msgId: `${'7F00000100002A9F0000000000000000,'.repeat(15)}7F00000100002A9F0000000000000001`, queueId: '3', 2: 'numeric key', z: '' }),
      createResponse(0, undefined, { tab: 'a\tb', del: '\u007f', n: 5 as unknown as string, u: undefined as unknown as string, o: { x: 1 } as unknown as string }),
      { ...createResponse(0), extFields: Object.create({ inherited: 'x' }) as Record<string, string> },
      { ...createResponse(0), extFields: ['a'] as unknown as Record<string, string> },
    ];
    const frameHeader = (c: RemotingCommand) => {
      const frame = Buffer.concat(encodeFrame(c));
      expect(frame.readInt32BE(0)).toBe(frame.length - 4);
      return frame.subarray(8, 8 + frame.readInt32BE(4)).toString('utf8');
    };
    for (const c of cases) {
      expect(encodeJsonHeader(c).toString('utf8')).toBe(reference(c));
      expect(frameHeader(c)).toBe(reference(c));
    }
    // Random extFields: mostly plain ASCII (the bytes-first path), now and then a character JSON escapes or a
    // non-ASCII one at any place of any key or value (that path gives up midway and the text path answers).
    let seed = 12345;
    const rand = (n: number) => {
      seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
      return (seed >>> 8) % n;
    };
    const specials = ['"', '\\', '\n', '\u0001', '\u007f', 'é', '😀', '\u2028'];
    const randomText = () => {
      let t = '';
      // Up to 80 characters now and then: long values take the native copy after a regexp test.
      for (let i = rand(4) === 0 ? rand(80) : rand(12); i > 0; i--) t += rand(40) === 0 ? specials[rand(specials.length)] : String.fromCharCode(0x20 + rand(95));
      return t;
    };
    for (let i = 0; i < 500; i++) {
      const ext: Record<string, string> = {};
      for (let j = rand(6); j > 0; j--) ext[randomText()] = randomText();
      const c = createResponse(rand(300), rand(10) === 0 ? randomText() : undefined, ext);
      if (rand(20) === 0) c.extFields = undefined as unknown as Record<string, string>;
      c.opaque = rand(2 ** 31) - 2 ** 30;
      c.version = rand(500);
      if (rand(20) === 0) c.language = 'GO';
      expect(frameHeader(c)).toBe(reference(c));
    }
  });

  it('writes multi-part bodies contiguously', () => {
    const res = createResponse(0);
    res.bodyParts = [Buffer.from('ab'), Buffer.from('cd')];
    const frame = Buffer.concat(encodeFrame(res));
    expect(frame.readInt32BE(0)).toBe(frame.length - 4);
    expect(decodeFrameBody(frame.subarray(4)).body?.toString()).toBe('abcd');
  });
});
