// The HA port's two byte streams, cut at every byte as TCP may deliver them, and with garbage.
import { describe, expect, it } from 'vitest';
import {
  encodeFrameHeader, encodeReport, FRAME_HEADER_BYTES, FrameReader, MAX_FRAME_BODY_BYTES, readOffset, ReportReader,
} from '../../src/ha/protocol.js';

/** Every way to cut `bytes` into two chunks, and into one-byte chunks. */
function* splits(bytes: Buffer): Generator<Buffer[]> {
  yield [bytes];
  for (let i = 1; i < bytes.length; i++) yield [bytes.subarray(0, i), bytes.subarray(i)];
  yield [...bytes].map((b) => Buffer.from([b]));
}

describe('offset reports (slave → master)', () => {
  it('encodes as a big-endian int64', () => {
    expect(encodeReport(0).toString('hex')).toBe('0000000000000000');
    expect(encodeReport(67108864).toString('hex')).toBe('0000000004000000');
    expect(readOffset(Buffer.from('0000000004000000', 'hex'), 0)).toBe(67108864);
  });

  it('yields every report in order however TCP cuts them', () => {
    const stream = Buffer.concat([encodeReport(0), encodeReport(1234), encodeReport(2 ** 40 + 5)]);
    for (const chunks of splits(stream)) {
      const r = new ReportReader();
      const got: number[] = [];
      for (const c of chunks) r.push(c, (v) => (got.push(v), true));
      expect(got).toEqual([0, 1234, 2 ** 40 + 5]);
      expect(r.pendingBytes).toBe(0);
    }
  });

  it('reads negative and out-of-range values as such (the master then closes), and stops when asked', () => {
    const r = new ReportReader();
    const got: number[] = [];
    const garbage = Buffer.from('ffffffffffffffff' + '7fffffffffffffff' + '0000000000000010', 'hex');
    r.push(garbage, (v) => (got.push(v), got.length < 2));
    expect(got[0]).toBe(-1);
    expect(Number.isNaN(got[1])).toBe(true);
    expect(got).toHaveLength(2);
  });
});

describe('transfer frames (master → slave)', () => {
  const body = Buffer.from('0123456789abcdefghij');
  const stream = Buffer.concat([
    encodeFrameHeader(4096, 0), encodeFrameHeader(4096, body.length), body, encodeFrameHeader(4116, 3), Buffer.from('xyz'),
  ]);

  it('yields headers and whole bodies however TCP cuts them', () => {
    for (const chunks of splits(stream)) {
      const got: string[] = [];
      const reader = new FrameReader(MAX_FRAME_BODY_BYTES, (reason) => got.push(`bad ${reason}`));
      for (const c of chunks) {
        reader.push(c, {
          onHeader: (o, n) => (got.push(`h ${o} ${n}`), true),
          onFrame: (o, b) => (got.push(`f ${o} ${Buffer.concat(b).toString()}`), true),
        });
      }
      expect(got).toEqual(['h 4096 0', 'f 4096 ', 'h 4096 20', `f 4096 ${body}`, 'h 4116 3', 'f 4116 xyz']);
    }
  });

  it('the 12-byte header is offset then size', () => {
    expect(encodeFrameHeader(0, 0).toString('hex')).toBe('000000000000000000000000');
    expect(FRAME_HEADER_BYTES).toBe(12);
  });

  it('stops at a header with a negative size, a size beyond the limit or a negative offset', () => {
    for (const bad of [encodeFrameHeader(0, -1), encodeFrameHeader(0, MAX_FRAME_BODY_BYTES + 1), encodeFrameHeader(-8, 4)]) {
      const got: string[] = [];
      const reader = new FrameReader(MAX_FRAME_BODY_BYTES, (reason) => got.push(reason));
      reader.push(Buffer.concat([bad, Buffer.alloc(64)]), {
        onHeader: () => (got.push('header'), true),
        onFrame: () => (got.push('frame'), true),
      });
      expect(got).toHaveLength(1);
      expect(got[0]).toMatch(/bad frame header/);
    }
  });

  it('stops when the handler refuses a header (the slave\'s offset check)', () => {
    const got: string[] = [];
    const reader = new FrameReader(MAX_FRAME_BODY_BYTES, () => got.push('bad'));
    reader.push(stream, { onHeader: (o) => (got.push(`h ${o}`), false), onFrame: () => (got.push('frame'), true) });
    expect(got).toEqual(['h 4096']);
  });
});
