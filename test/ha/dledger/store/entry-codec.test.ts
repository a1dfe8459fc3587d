// Entry and index-unit bytes against what an official 5.3.3 follower wrote (protocol/dledger.md §4.2 / §4.3:
// the first entry of its data file and the first unit of its index file, captured in the §7.3 experiment).
import { describe, expect, it } from 'vitest';
import {
  decodeEntry,
  encodeEntry,
  encodeIndexUnit,
  entriesEqual,
  readIndexUnit,
} from '../../../../src/ha/dledger/store/entry-codec.js';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

const CAPTURED_HEADER = hex(
  '00000001 00000122 0000000000000000 0000000000000001 0000000000000000 00000000 00000000 00000000 000000f2',
);
const CAPTURED_RECORD_START = hex('000000f2 daa320a7');
const CAPTURED_INDEX_UNIT = hex('00000001 0000000000000000 00000122 0000000000000000 0000000000000001');

/** A 242-byte body beginning as the captured record does (the rest of it was not kept). */
function capturedBody(): Buffer {
  const body = Buffer.alloc(0xf2, 0x5a);
  CAPTURED_RECORD_START.copy(body, 0);
  return body;
}

describe('DLedger entry codec', () => {
  it('encodes the captured first entry header byte for byte', () => {
    const bytes = encodeEntry({ magic: 1, index: 0, term: 1, pos: 0, channel: 0, chainCrc: 0, bodyCrc: 0, body: capturedBody() });
    expect(bytes.length).toBe(0x122);
    expect(bytes.subarray(0, 48).toString('hex')).toBe(CAPTURED_HEADER.toString('hex'));
    expect(bytes.subarray(48, 56).toString('hex')).toBe(CAPTURED_RECORD_START.toString('hex'));
  });

  it('decodes the captured entry', () => {
    const e = decodeEntry(Buffer.concat([CAPTURED_HEADER, capturedBody()]));
    expect({ ...e, body: e.body.length }).toEqual({
      magic: 1, size: 290, index: 0, term: 1, pos: 0, channel: 0, chainCrc: 0, bodyCrc: 0, body: 242,
    });
    expect(e.body.subarray(0, 8).equals(CAPTURED_RECORD_START)).toBe(true);
  });

  it('encodes and decodes the captured index unit', () => {
    expect(encodeIndexUnit({ magic: 1, pos: 0, size: 290, index: 0, term: 1 }).toString('hex')).toBe(CAPTURED_INDEX_UNIT.toString('hex'));
    expect(readIndexUnit(CAPTURED_INDEX_UNIT)).toEqual({ magic: 1, pos: 0, size: 290, index: 0, term: 1 });
  });

  it('round-trips large values and refuses inconsistent sizes', () => {
    const e = { magic: 1, index: 2 ** 40 + 3, term: 77, pos: 5 * 2 ** 32 + 48, channel: 0, chainCrc: 0, bodyCrc: 0, body: Buffer.from('xyz') };
    const bytes = encodeEntry(e);
    expect(decodeEntry(bytes)).toEqual({ ...e, size: 51 });
    const bad = Buffer.from(bytes);
    bad.writeInt32BE(52, 4);
    expect(() => decodeEntry(bad)).toThrow(/size 52/);
    expect(() => decodeEntry(bytes.subarray(0, 50))).toThrow(/truncated/);
  });

  it('compares entries as DLedgerEntry.equals does (not the CRC fields)', () => {
    const a = decodeEntry(encodeEntry({ magic: 1, index: 4, term: 2, pos: 96, channel: 0, chainCrc: 0, bodyCrc: 0, body: Buffer.from('abc') }));
    expect(entriesEqual(a, { ...a, bodyCrc: 9, chainCrc: 8 })).toBe(true);
    expect(entriesEqual(a, { ...a, term: 3 })).toBe(false);
    expect(entriesEqual(a, { ...a, pos: 97 })).toBe(false);
    expect(entriesEqual(a, { ...a, body: Buffer.from('abd') })).toBe(false);
  });
});
