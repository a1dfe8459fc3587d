// Reading the commit-log records out of DLedger entries (Java DLedgerCommitLog.checkMessageAndReturnSize as the
// reput and recovery use it): each entry is a 48-byte DLedger header and one standard record whose PHYSICALOFFSET
// is the entry's pos + 48; a file ends with the DLedger blank (magic −1, then the bytes left), never the classic one.
import { DLEDGER_ENTRY_HEADER_BYTES, type DLedgerStorePort } from './types.js';
import { DLEDGER_BLANK_MAGIC, DLEDGER_ENTRY_MAGIC } from './store/entry-codec.js';
import { type DecodedRecord, decodeRecord, readInt64, RECORD_OVERHEAD_V1_IPV4, storeTimestampPos, RecordPos } from '../../store/index.js';
/** One read of the reput covers at most this many bytes (more for a single larger entry). */
const SCAN_CHUNK_BYTES = 1024 * 1024;

export interface ScannedRecord {
  record: DecodedRecord;
  /** The record's commit-log offset: entry pos + 48. */
  offset: number;
}

export type ScanOutcome =
  | { ok: true; records: ScannedRecord[]; next: number }
  /** `next`: how far the scan got; records before it are in `records`. */
  | { ok: false; records: ScannedRecord[]; next: number; reason: string };

/** The start of the data file holding `pos` (DLedger files are aligned to their size, as the classic ones). */
export function fileStartOf(pos: number, fileSizeBytes: number): number {
  return pos - (pos % fileSizeBytes);
}

/**
 * Records of the entries in [from, to): `from` must be an entry start (or a blank), `to` an entry end (committedPos).
 * Stops after about `maxBytes` so a long catch-up yields to the event loop. Synchronous (the store's reads are).
 */
export function scanEntries(
  store: DLedgerStorePort, from: number, to: number, fileSizeBytes: number, maxBytes = SCAN_CHUNK_BYTES,
): ScanOutcome {
  const records: ScannedRecord[] = [];
  let pos = from;
  const stopAt = Math.min(to, from + maxBytes);
  while (pos < to && (pos < stopAt || records.length === 0)) {
    const fileEnd = fileStartOf(pos, fileSizeBytes) + fileSizeBytes;
    const chunkEnd = Math.min(to, fileEnd, Math.max(pos + DLEDGER_ENTRY_HEADER_BYTES, stopAt));
    const chunk = store.readData(pos, chunkEnd - pos);
    if (!chunk) return { ok: false, records, next: pos, reason: `no data at ${pos} (store min ${store.minOffset})` };
    if (chunk.length < 8) return { ok: false, records, next: pos, reason: `${chunk.length} bytes at ${pos}: no entry header fits` };
    let at = 0;
    while (pos < chunkEnd) {
      if (chunk.length - at < 8) break;
      const magic = chunk.readInt32BE(at);
      if (magic === DLEDGER_BLANK_MAGIC) {
        pos = fileEnd;
        break;
      }
      const size = chunk.readInt32BE(at + 4);
      if (magic !== DLEDGER_ENTRY_MAGIC || size < DLEDGER_ENTRY_HEADER_BYTES + RECORD_OVERHEAD_V1_IPV4 || pos + size > fileEnd) {
        return { ok: false, records, next: pos, reason: `no DLedger entry at ${pos} (magic ${magic}, size ${size})` };
      }
      if (pos + size > to) return { ok: false, records, next: pos, reason: `entry at ${pos} of ${size} bytes crosses ${to}` };
      let entry: Buffer;
      if (at + size <= chunk.length) {
        entry = chunk.subarray(at, at + size);
      } else {
        // An entry longer than what is left of the chunk: read it whole, then go on after it.
        const whole = store.readData(pos, size);
        if (!whole) return { ok: false, records, next: pos, reason: `entry at ${pos} cannot be read` };
        entry = whole;
      }
      const bad = checkEntryRecord(entry, pos);
      if (typeof bad === 'string') return { ok: false, records, next: pos, reason: bad };
      records.push({ record: bad, offset: pos + DLEDGER_ENTRY_HEADER_BYTES });
      pos += size;
      if (at + size > chunk.length) break;
      at += size;
    }
  }
  return { ok: true, records, next: pos };
}

/** The record inside an entry, or why it is not one (its PHYSICALOFFSET must be pos + 48: the leader's hook wrote it). */
function checkEntryRecord(entry: Buffer, pos: number): DecodedRecord | string {
  let record: DecodedRecord;
  try {
    record = decodeRecord(entry, DLEDGER_ENTRY_HEADER_BYTES);
  } catch (err) {
    return `entry at ${pos}: ${(err as Error).message}`;
  }
  if (record.totalSize !== entry.length - DLEDGER_ENTRY_HEADER_BYTES) return `entry at ${pos}: record of ${record.totalSize} bytes in a body of ${entry.length - DLEDGER_ENTRY_HEADER_BYTES}`;
  if (record.commitLogOffset !== pos + DLEDGER_ENTRY_HEADER_BYTES) return `entry at ${pos}: record says it is at ${record.commitLogOffset}`;
  return record;
}

/**
 * The STORETIMESTAMP of the record in the entry at `pos`, or −1 when there is no entry there (a file recreated
 * mid-way starts with a hole). Java DLedgerCommitLog.isMmapFileMatchedRecover reads the same field.
 */
export function entryStoreTimestamp(store: DLedgerStorePort, pos: number): number {
  const head = store.readData(pos, DLEDGER_ENTRY_HEADER_BYTES + RecordPos.BORN_HOST + 20 + 8);
  if (!head || head.readInt32BE(0) !== DLEDGER_ENTRY_MAGIC) return -1;
  const sysFlag = head.readInt32BE(DLEDGER_ENTRY_HEADER_BYTES + RecordPos.SYS_FLAG);
  return readInt64(head, DLEDGER_ENTRY_HEADER_BYTES + storeTimestampPos(sysFlag));
}
