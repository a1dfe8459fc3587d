import { describe, expect, it } from 'vitest';
import { createOffsetMessageId, decodeOffsetMessageId, offsetMessageIds, parseHostAddress } from '../../src/broker/message-id.js';

describe('offset message ids', () => {
  it('encode ip, port and a 64-bit offset as Java MessageDecoder.createMessageId does', () => {
    const host = parseHostAddress('127.0.0.1:10911');
    // 0x2A9F = 10911; offset 2^32 + 16 needs both halves
    expect(createOffsetMessageId(host, 0x100000010)).toBe('7F00000100002A9F0000000100000010');
    expect(createOffsetMessageId(host, 0)).toBe('7F00000100002A9F0000000000000000');
    const big = 2 ** 52 + 12345;
    expect(decodeOffsetMessageId(createOffsetMessageId(host, big))).toEqual({ addr: '127.0.0.1:10911', commitLogOffset: big });
  });

  it('joins the ids of records stored together with commas, as a batch send answers them', () => {
    const offsets = [0, 0x100000010, 2 ** 52 + 12345, 4294967295, 4294967296];
    for (const host of [parseHostAddress('127.0.0.1:10911'), parseHostAddress('[2001:db8::1]:65535')]) {
      expect(offsetMessageIds(host, offsets)).toBe(offsets.map((o) => createOffsetMessageId(host, o)).join(','));
      expect(offsetMessageIds(host, [7])).toBe(createOffsetMessageId(host, 7));
    }
    expect(offsetMessageIds(parseHostAddress('1.2.3.4:5'), [])).toBe('');
  });

  it('parses the same address to the same host every time, v4 and v6', () => {
    const a = parseHostAddress('10.1.2.3:99');
    expect([...a.ip]).toEqual([10, 1, 2, 3]);
    expect(a.port).toBe(99);
    expect(parseHostAddress('10.1.2.3:99')).toEqual(a);
    const v6 = parseHostAddress('[::1]:10911');
    expect(v6.ip.length).toBe(16);
    expect(v6.ip[15]).toBe(1);
    expect(parseHostAddress('::ffff:127.0.0.1:5').ip).toEqual(Buffer.from([127, 0, 0, 1]));
  });
});
