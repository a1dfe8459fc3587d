import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  BLANK_MAGIC_CODE, bodyCrc32, decodeRecord, encodeRecord, encodeRecordSize, MESSAGE_MAGIC_CODE_V1,
  MESSAGE_MAGIC_CODE_V2, RECORD_OVERHEAD_V1_IPV4, RecordPos, storeTimestampPos, SysFlag,
} from '../../src/store/index.js';
import { bodyCrc32Parts, crc32, crc32Implementation, crc32Table } from '../../src/store/crc32.js';
import { makeMessage } from './helpers.js';

describe('record codec', () => {
  it('has the Java v1/IPv4 size formula: 91 + body + topic + properties', () => {
    expect(RECORD_OVERHEAD_V1_IPV4).toBe(91);
    expect(encodeRecordSize(0, 10, 5, 7)).toBe(91 + 10 + 5 + 7);
    // IPv6 born host adds 12, store host another 12.
    expect(encodeRecordSize(SysFlag.BORNHOST_V6, 0, 1, 0)).toBe(91 + 1 + 12);
    expect(encodeRecordSize(SysFlag.BORNHOST_V6 | SysFlag.STOREHOSTADDRESS_V6, 0, 1, 0)).toBe(91 + 1 + 24);
    // v2: 2-byte topic length.
    expect(encodeRecordSize(0, 0, 200, 0)).toBe(92 + 200);
  });

  it('round-trips a v1 IPv4 record', () => {
    const msg = makeMessage('TopicTest', 3, 'hello world', { tags: 'TagA', keys: 'k1 k2' });
    msg.flag = 7;
    msg.reconsumeTimes = 2;
    msg.preparedTransactionOffset = 123456789012;
    const buf = encodeRecord(msg, 42, 8192, 1700000001234);
    expect(buf.length).toBe(91 + 11 + 9 + Buffer.byteLength(msg.propertiesString));
    expect(buf.readUInt32BE(4)).toBe(MESSAGE_MAGIC_CODE_V1);
    expect(buf.readInt32BE(RecordPos.QUEUE_OFFSET + 4)).toBe(42);
    expect(buf.readInt32BE(RecordPos.PHYSICAL_OFFSET + 4)).toBe(8192);
    expect(buf.readInt32BE(56 + 4)).toBe(1700000001234 % 2 ** 32 | 0);
    const d = decodeRecord(buf);
    expect(d).toMatchObject({
      totalSize: buf.length, magic: MESSAGE_MAGIC_CODE_V1, queueId: 3, flag: 7, queueOffset: 42,
      commitLogOffset: 8192, sysFlag: 0, bornTimestamp: 1700000000000, storeTimestamp: 1700000001234,
      reconsumeTimes: 2, preparedTransactionOffset: 123456789012, topic: 'TopicTest',
      propertiesString: msg.propertiesString,
    });
    expect(d.body.toString()).toBe('hello world');
    expect(d.bodyCrc).toBe(bodyCrc32(msg.body));
    expect(d.bornHost).toEqual({ ip: Buffer.from([127, 0, 0, 1]), port: 54321 });
    expect(d.storeHost).toEqual({ ip: Buffer.from([127, 0, 0, 1]), port: 10911 });
  });

  it('writes every field at Java\'s position, byte for byte as Buffer\'s own big-endian writers would', () => {
    // An independent encoder built from Buffer.write*BE, field by field as MessageExtEncoder lays them out.
    const reference = (msg: ReturnType<typeof makeMessage>, queueOffset: number, clOffset: number, storeTs: number): Buffer => {
      const topic = Buffer.from(msg.topic);
      const props = Buffer.from(msg.propertiesString);
      const v2 = topic.length > 127;
      const born = msg.bornHost.ip.length + 4;
      const store = msg.storeHost.ip.length + 4;
      const b = Buffer.alloc(56 + born + store + 16 + msg.body.length + (v2 ? 2 : 1) + topic.length + 2 + props.length);
      let o = 0;
      const i64 = (v: number) => { b.writeBigInt64BE(BigInt(v), o); o += 8; };
      o = b.writeInt32BE(b.length, o);
      o = b.writeUInt32BE(v2 ? MESSAGE_MAGIC_CODE_V2 : MESSAGE_MAGIC_CODE_V1, o);
      o = b.writeInt32BE(bodyCrc32(msg.body), o);
      o = b.writeInt32BE(msg.queueId, o);
      o = b.writeInt32BE(msg.flag, o);
      i64(queueOffset);
      i64(clOffset);
      o = b.writeInt32BE((msg.sysFlag & ~0x30) | (msg.bornHost.ip.length === 16 ? 0x10 : 0) | (msg.storeHost.ip.length === 16 ? 0x20 : 0), o);
      i64(msg.bornTimestamp);
      o += msg.bornHost.ip.copy(b, o);
      o = b.writeInt32BE(msg.bornHost.port, o);
      i64(storeTs);
      o += msg.storeHost.ip.copy(b, o);
      o = b.writeInt32BE(msg.storeHost.port, o);
      o = b.writeInt32BE(msg.reconsumeTimes, o);
      i64(msg.preparedTransactionOffset);
      o = b.writeInt32BE(msg.body.length, o);
      o += msg.body.copy(b, o);
      o = v2 ? b.writeInt16BE(topic.length, o) : b.writeInt8(topic.length, o);
      o += topic.copy(b, o);
      o = b.writeInt16BE(props.length, o);
      props.copy(b, o);
      return b;
    };
    const cases = [
      makeMessage('TopicTest', 3, 'hello world', { tags: 'TagA', keys: 'k1 k2' }),
      makeMessage('T'.repeat(200), 2147483647, Buffer.alloc(70000, 0xab), { keys: 'schlüssel ключ' }),
      makeMessage('t', 0, ''),
    ];
    cases[0]!.flag = -2;
    cases[0]!.reconsumeTimes = 16;
    cases[1]!.preparedTransactionOffset = 2 ** 52 + 12345;
    cases[1]!.bornHost = { ip: Buffer.from('20010db8000000000000000000000001', 'hex'), port: 65535 };
    cases[2]!.bornTimestamp = 2 ** 41 + 7;
    for (const m of cases) {
      for (const [qo, co] of [[0, 0], [2 ** 32 + 5, 2 ** 40 + 3], [2 ** 53 - 1, 2 ** 31]] as const) {
        expect(encodeRecord(m, qo, co, 1700000001234)).toEqual(reference(m, qo, co, 1700000001234));
      }
    }
  });

  it('uses the v2 magic and a 2-byte topic length for topics over 127 bytes', () => {
    const topic = '%RETRY%' + 'g'.repeat(150);
    const msg = makeMessage(topic, 0, 'x');
    const buf = encodeRecord(msg, 0, 0, 1);
    expect(buf.readUInt32BE(4)).toBe(MESSAGE_MAGIC_CODE_V2);
    expect(buf.length).toBe(92 + 1 + topic.length);
    const d = decodeRecord(buf);
    expect(d.topic).toBe(topic);
    expect(d.magic).toBe(MESSAGE_MAGIC_CODE_V2);
    // 127 bytes is still v1.
    expect(encodeRecord(makeMessage('t'.repeat(127), 0, 'x'), 0, 0, 1).readUInt32BE(4)).toBe(MESSAGE_MAGIC_CODE_V1);
  });

  it('sets the IPv6 host flags from the address lengths', () => {
    const v6 = Buffer.alloc(16, 0);
    v6[15] = 1;
    const msg = makeMessage('T', 1, 'body', { bornHost: v6 });
    const buf = encodeRecord(msg, 5, 0, 99);
    const d = decodeRecord(buf);
    expect(d.sysFlag & SysFlag.BORNHOST_V6).toBe(SysFlag.BORNHOST_V6);
    expect(d.sysFlag & SysFlag.STOREHOSTADDRESS_V6).toBe(0);
    expect(d.bornHost.ip).toEqual(v6);
    expect(d.storeTimestamp).toBe(99);
    expect(storeTimestampPos(d.sysFlag)).toBe(68);
    const both = decodeRecord(encodeRecord(makeMessage('T', 1, 'b', { bornHost: v6, storeHost: v6 }), 0, 0, 5));
    expect(both.sysFlag & 0x30).toBe(0x30);
    expect(both.storeHost).toEqual({ ip: v6, port: 10911 });
    // A v6 flag asked for with a v4 address is cleared.
    const cleared = decodeRecord(encodeRecord(makeMessage('T', 1, 'b', { sysFlag: 0x10 }), 0, 0, 5));
    expect(cleared.sysFlag & 0x10).toBe(0);
  });

  it('rejects truncated, blank and inconsistent bytes', () => {
    const buf = encodeRecord(makeMessage('T', 0, 'abc', { tags: 'x' }), 0, 0, 1);
    expect(() => decodeRecord(buf.subarray(0, buf.length - 1))).toThrow(RangeError);
    const blank = Buffer.alloc(8);
    blank.writeInt32BE(100, 0);
    blank.writeUInt32BE(BLANK_MAGIC_CODE, 4);
    expect(() => decodeRecord(blank)).toThrow(RangeError);
    const bad = Buffer.from(buf);
    bad.writeInt32BE(buf.length + 1, 0);
    expect(() => decodeRecord(Buffer.concat([bad, Buffer.alloc(1)]))).toThrow(RangeError);
  });

  it('computes BODYCRC like Java UtilAll.crc32 (sign bit cleared)', () => {
    const data = Buffer.from('123456789');
    expect(zlib.crc32(data)).toBe(0xcbf43926);
    expect(bodyCrc32(data)).toBe(0x4bf43926);
    const big = Buffer.alloc(10000);
    for (let i = 0; i < big.length; i++) big[i] = (i * 31) & 0xff;
    expect(crc32Table(big)).toBe(zlib.crc32(big));
  });

  it('gives the table CRC for every length and split, whichever implementation takes each piece', () => {
    expect(crc32Implementation).toBe('@node-rs/crc32'); // installed with the dependencies on linux-x64
    const big = Buffer.alloc(200_000);
    for (let i = 0; i < big.length; i++) big[i] = (i * 131 + 7) & 0xff;
    let seed = 20261203;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed % n;
    };
    for (const len of [0, 1, 16, 383, 384, 385, 1024, 65_536, 150_000]) {
      const start = next(big.length - len + 1);
      const piece = big.subarray(start, start + len);
      const want = crc32Table(piece);
      expect(crc32(piece)).toBe(want);
      expect(bodyCrc32(piece)).toBe(want & 0x7fffffff);
      const cuts = [0, next(len + 1), next(len + 1), len].sort((a, b) => a - b);
      const parts = [piece.subarray(cuts[0], cuts[1]), piece.subarray(cuts[1], cuts[2]), piece.subarray(cuts[2], cuts[3])];
      expect(bodyCrc32Parts(parts)).toBe(want & 0x7fffffff);
    }
  });
});
