// DLedger 0.3.1.2 entry and index-unit bytes (protocol/dledger.md §4.2–4.4; D/entry/DLedgerEntryCoder,
// D/store/file/DLedgerMmapFileStore, D/store/file/MmapFileList). Big-endian throughout.
//
//   entry (48-byte header + body):  magic i32 | size i32 | index i64 | term i64 | pos i64 | channel i32 |
//                                   chainCrc i32 | bodyCrc i32 | bodySize i32 | body
//   index unit (32 bytes):          magic i32 | pos i64 | size i32 | index i64 | term i64
//   data-file end blank:            magic −1 | bytes left i32 | zeros (needed when size + 8 > room left)
import { readInt64, writeInt64 } from '../../../store/record.js';
import { DLEDGER_ENTRY_HEADER_BYTES, type DLedgerEntry } from '../types.js';

/** The only entry magic 0.3.1.2 writes or accepts (DLedgerMmapFileStore.CURRENT_MAGIC). */
export const DLEDGER_ENTRY_MAGIC = 1;
/** File-end blank magic (MmapFileList.BLANK_MAGIC_CODE). */
export const DLEDGER_BLANK_MAGIC = -1;
/** An entry must leave this many bytes free in its file, else it goes to the next one (MmapFileList.MIN_BLANK_LEN). */
export const DLEDGER_MIN_BLANK_BYTES = 8;
/** Bytes before bodySize (DLedgerEntry.HEADER_SIZE): a valid entry's size is larger than this. */
export const DLEDGER_HEADER_SIZE_FIELD_BYTES = 44;
/** Offset of the pos field in the header (DLedgerEntry.POS_OFFSET). */
export const DLEDGER_POS_OFFSET = 24;
export const DLEDGER_INDEX_UNIT_BYTES = 32;
/**
 * Largest entry (header included) an official member can encode: its per-thread entry buffer is 4 MiB
 * (DLedgerMmapFileStore.localEntryBuffer); a bigger one fails there, so we refuse it before anything is written.
 */
export const DLEDGER_MAX_ENTRY_BYTES = 4 * 1024 * 1024;

const HEADER = DLEDGER_ENTRY_HEADER_BYTES;

/** The header fields of an entry (everything but the body). */
export interface EntryHeader {
  magic: number;
  size: number;
  index: number;
  term: number;
  pos: number;
  channel: number;
  chainCrc: number;
  bodyCrc: number;
  bodySize: number;
}

export interface IndexUnit {
  magic: number;
  pos: number;
  size: number;
  index: number;
  term: number;
}

/** Writes the 48 header bytes of `e` at `off` (size and bodySize from `bodyBytes`). */
export function writeEntryHeader(
  target: Buffer,
  off: number,
  e: Pick<DLedgerEntry, 'magic' | 'index' | 'term' | 'pos' | 'channel' | 'chainCrc' | 'bodyCrc'>,
  bodyBytes: number,
): void {
  target.writeInt32BE(e.magic, off);
  target.writeInt32BE(HEADER + bodyBytes, off + 4);
  writeInt64(target, off + 8, e.index);
  writeInt64(target, off + 16, e.term);
  writeInt64(target, off + DLEDGER_POS_OFFSET, e.pos);
  target.writeInt32BE(e.channel | 0, off + 32);
  target.writeInt32BE(e.chainCrc | 0, off + 36);
  target.writeInt32BE(e.bodyCrc | 0, off + 40);
  target.writeInt32BE(bodyBytes, off + 44);
}

/** Header + body in one fresh buffer; size is recomputed from the body as the Java encoder does. */
export function encodeEntry(e: Omit<DLedgerEntry, 'size'>): Buffer {
  const buf = Buffer.allocUnsafe(HEADER + e.body.length);
  writeEntryHeader(buf, 0, e, e.body.length);
  e.body.copy(buf, HEADER);
  return buf;
}

export function readEntryHeader(buf: Buffer, off = 0): EntryHeader {
  return {
    magic: buf.readInt32BE(off),
    size: buf.readInt32BE(off + 4),
    index: readInt64(buf, off + 8),
    term: readInt64(buf, off + 16),
    pos: readInt64(buf, off + DLEDGER_POS_OFFSET),
    channel: buf.readInt32BE(off + 32),
    chainCrc: buf.readInt32BE(off + 36),
    bodyCrc: buf.readInt32BE(off + 40),
    bodySize: buf.readInt32BE(off + 44),
  };
}

/**
 * Decodes a whole entry at `off`; the body is a view into `buf`. Throws RangeError when the bytes are not a
 * complete entry (short buffer, size fields disagreeing).
 */
export function decodeEntry(buf: Buffer, off = 0): DLedgerEntry {
  if (buf.length - off < HEADER) throw new RangeError(`entry header truncated (${buf.length - off} bytes)`);
  const h = readEntryHeader(buf, off);
  if (h.bodySize < 0 || h.bodySize + HEADER !== h.size) {
    throw new RangeError(`entry size ${h.size} != ${HEADER} + bodySize ${h.bodySize}`);
  }
  if (off + h.size > buf.length) throw new RangeError(`entry body truncated (size ${h.size}, ${buf.length - off} bytes)`);
  return {
    magic: h.magic,
    size: h.size,
    index: h.index,
    term: h.term,
    pos: h.pos,
    channel: h.channel,
    chainCrc: h.chainCrc,
    bodyCrc: h.bodyCrc,
    body: buf.subarray(off + HEADER, off + h.size),
  };
}

export function writeIndexUnit(target: Buffer, off: number, u: IndexUnit): void {
  target.writeInt32BE(u.magic, off);
  writeInt64(target, off + 4, u.pos);
  target.writeInt32BE(u.size, off + 12);
  writeInt64(target, off + 16, u.index);
  writeInt64(target, off + 24, u.term);
}

export function encodeIndexUnit(u: IndexUnit): Buffer {
  const buf = Buffer.allocUnsafe(DLEDGER_INDEX_UNIT_BYTES);
  writeIndexUnit(buf, 0, u);
  return buf;
}

export function readIndexUnit(buf: Buffer, off = 0): IndexUnit {
  return {
    magic: buf.readInt32BE(off),
    pos: readInt64(buf, off + 4),
    size: buf.readInt32BE(off + 12),
    index: readInt64(buf, off + 16),
    term: readInt64(buf, off + 24),
  };
}

/** Whether an index unit describes this header at this position (the recovery cross-check, §4.7). */
export function indexUnitMatches(u: IndexUnit, h: EntryHeader, absolutePos: number): boolean {
  return u.magic === h.magic && u.size === h.size && u.index === h.index && u.term === h.term && u.pos === absolutePos;
}

/** DLedgerEntry.equals: size, magic, index, term, channel, pos and body bytes (not the CRC fields). */
export function entriesEqual(a: DLedgerEntry, b: DLedgerEntry): boolean {
  return (
    a.size === b.size &&
    a.magic === b.magic &&
    a.index === b.index &&
    a.term === b.term &&
    a.channel === b.channel &&
    a.pos === b.pos &&
    a.body.equals(b.body)
  );
}

/** 20-digit zero-padded decimal file name of a byte offset (DLedgerUtils.offset2FileName). */
export function offsetToFileName(offset: number): string {
  return String(offset).padStart(20, '0');
}
