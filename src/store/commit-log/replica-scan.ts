// A slave's view of the bytes its master ships: frames cut anywhere (mid-record, mid-padding), records that must
// sit exactly where their PHYSICALOFFSET says, BLANK + zero padding up to each file's end. The scan checks a frame
// before anything of it is appended and turns its complete records into dispatch entries, as the reput thread of a
// Java slave does (ReputMessageService.doReput: a partial record waits for the rest, never skipped).
import { indexKeysOf } from '../record-properties.js';
import {
  BLANK_MAGIC_CODE, decodeRecord, END_FILE_MIN_BLANK_LENGTH, isQueuedTransactionType, MESSAGE_MAGIC_CODE_V1,
  MESSAGE_MAGIC_CODE_V2, readInt64, RECORD_OVERHEAD_V1_IPV4, RecordPos,
} from '../record.js';
import { tagsCodeOf } from '../dispatcher.js';
import type { WrittenRecord } from './port.js';

/** Where the scan stands: the offset the next record starts at, and the bytes of it already appended. */
export interface ReplicaScanState {
  /**
   * Offset of the next record boundary. Below the log's end: the start of a record received in part (`carry` holds
   * its bytes). Above it: the end of a file whose BLANK was seen, the bytes up to it are padding.
   */
  recordStart: number;
  /** The part of the record at recordStart received so far (null when the log ends on a boundary). */
  carry: Buffer | null;
}

export type ReplicaScan =
  | { ok: true; entries: WrittenRecord[]; state: ReplicaScanState; lastStoreTimestamp: number }
  | { ok: false; reason: string };

/**
 * Scans `bytes`, to be appended at `offset` (the log's end), which lies in the file [fileStart, fileStart+fileSize).
 * Nothing is changed: the caller commits the returned state only if it appends the frame.
 */
export function scanReplicated(
  state: ReplicaScanState, offset: number, bytes: Buffer, fileSize: number, delayLevelsMs: readonly number[],
): ReplicaScan {
  const fileStart = offset - (offset % fileSize);
  const fileEnd = fileStart + fileSize;
  const end = offset + bytes.length;
  const entries: WrittenRecord[] = [];
  let lastStoreTimestamp = 0;
  let recordStart = state.recordStart;
  let carry = state.carry;
  // Padding after a BLANK (or a file tail too short for a record): skipped.
  if (recordStart > offset && recordStart >= end) return { ok: true, entries, state: { recordStart, carry: null }, lastStoreTimestamp };
  if (carry && recordStart + carry.length !== offset) return { ok: false, reason: `scan state at ${recordStart}+${carry.length}, frame at ${offset}` };
  if (!carry && recordStart < offset) return { ok: false, reason: `scan state at ${recordStart}, frame at ${offset}` };

  while (recordStart < end) {
    if (recordStart >= fileEnd) return { ok: false, reason: `frame crosses the file end ${fileEnd}` };
    if (fileEnd - recordStart < END_FILE_MIN_BLANK_LENGTH) {
      // Java leaves room for a BLANK at every record start; a shorter tail counts as the end of the file.
      recordStart = fileEnd;
      carry = null;
      break;
    }
    // The record's bytes: its head from the carry, the rest from this frame.
    const fromFrame = Math.max(0, recordStart - offset);
    const have = (carry ? carry.length : 0) + (end - Math.max(recordStart, offset));
    const view = (n: number): Buffer => {
      if (!carry) return bytes.subarray(fromFrame, fromFrame + n);
      if (n <= carry.length) return carry.subarray(0, n);
      return Buffer.concat([carry, bytes.subarray(0, n - carry.length)]);
    };
    if (have < 8) {
      carry = view(have);
      break;
    }
    const head = view(8);
    const size = head.readInt32BE(0);
    const magic = head.readUInt32BE(4);
    if (magic === BLANK_MAGIC_CODE) {
      if (size !== fileEnd - recordStart) return { ok: false, reason: `BLANK at ${recordStart} of size ${size}, ${fileEnd - recordStart} bytes left in the file` };
      recordStart = fileEnd;
      carry = null;
      break;
    }
    if (magic !== MESSAGE_MAGIC_CODE_V1 && magic !== MESSAGE_MAGIC_CODE_V2) {
      return { ok: false, reason: `no record at ${recordStart} (magic 0x${magic.toString(16)}): the master's log does not continue ours` };
    }
    if (size < RECORD_OVERHEAD_V1_IPV4 || size > fileEnd - recordStart) {
      return { ok: false, reason: `record at ${recordStart} has size ${size}, ${fileEnd - recordStart} bytes left in the file` };
    }
    if (have < size) {
      const part = view(have);
      if (have >= RecordPos.PHYSICAL_OFFSET + 8 && readInt64(part, RecordPos.PHYSICAL_OFFSET) !== recordStart) {
        return { ok: false, reason: `record at ${recordStart} says it is at ${readInt64(part, RecordPos.PHYSICAL_OFFSET)}` };
      }
      // A copy: the frame buffer is the socket's, and the carry outlives it.
      carry = Buffer.from(part);
      break;
    }
    const raw = view(size);
    let rec;
    try {
      rec = decodeRecord(raw, 0);
    } catch (err) {
      return { ok: false, reason: `record at ${recordStart}: ${(err as Error).message}` };
    }
    if (rec.commitLogOffset !== recordStart) return { ok: false, reason: `record at ${recordStart} says it is at ${rec.commitLogOffset}` };
    const ik = indexKeysOf({ keys: undefined, uniqKey: undefined, propertiesString: rec.propertiesString });
    entries.push({
      topic: rec.topic, queueId: rec.queueId, queueOffset: rec.queueOffset, commitLogOffset: recordStart, sizeBytes: size,
      tagsCode: tagsCodeOf(rec.topic, rec.propertiesString, rec.storeTimestamp, delayLevelsMs), storeTimestamp: rec.storeTimestamp,
      queued: isQueuedTransactionType(rec.sysFlag), sysFlag: rec.sysFlag, keys: ik.keys, uniqKey: ik.uniqKey,
      propertiesString: rec.propertiesString,
    });
    lastStoreTimestamp = rec.storeTimestamp;
    recordStart += size;
    carry = null;
  }
  return { ok: true, entries, state: { recordStart, carry }, lastStoreTimestamp };
}
