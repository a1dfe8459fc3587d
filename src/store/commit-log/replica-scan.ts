// A slave's view of the bytes its master ships: frames cut anywhere (mid-record, mid-padding), records that must
// sit exactly where their PHYSICALOFFSET says, BLANK + zero padding up to each file's end. The scan checks a frame
// before anything of it is appended and turns its complete records into dispatch entries, as the reput thread of a
// Java slave does (ReputMessageService.doReput: a partial record waits for the rest, never skipped).
import { indexKeysOf } from '../record-properties.js';
import {
  BLANK_MAGIC_CODE, decodeRecord, END_FILE_MIN_BLANK_LENGTH, isQueuedTransactionType, MESSAGE_MAGIC_CODE_V1,
  MESSAGE_MAGIC_CODE_V2, readInt64, RECORD_OVERHEAD_V1_IPV4, RecordPos, storeHostLength, storeHostPos,
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
  /**
   * The part of the record at recordStart received so far, as views of the appended frames in order (null when the
   * log ends on a boundary). Views, not copies: a frame's bytes are never changed after appendReplicated took them.
   */
  carry: Buffer[] | null;
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
  if (carry && recordStart + lengthOf(carry) !== offset) return { ok: false, reason: `scan state at ${recordStart}+${lengthOf(carry)}, frame at ${offset}` };
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
    const carried = carry ? lengthOf(carry) : 0;
    const have = carried + (end - Math.max(recordStart, offset));
    const rec = new RecordBytes(carry, carried, bytes, fromFrame);
    if (have < 8) {
      carry = rec.pieces(have);
      break;
    }
    const size = rec.int32(0);
    const magic = rec.int32(4) >>> 0;
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
      if (have >= RecordPos.PHYSICAL_OFFSET + 8) {
        const at = readInt64(rec.bytes(RecordPos.PHYSICAL_OFFSET, 8), 0);
        if (at !== recordStart) return { ok: false, reason: `record at ${recordStart} says it is at ${at}` };
      }
      carry = rec.pieces(have);
      break;
    }
    let decoded;
    try {
      decoded = decodeRecord(rec.withoutBody(size), 0);
    } catch (err) {
      return { ok: false, reason: `record at ${recordStart}: ${(err as Error).message}` };
    }
    if (decoded.commitLogOffset !== recordStart) return { ok: false, reason: `record at ${recordStart} says it is at ${decoded.commitLogOffset}` };
    const ik = indexKeysOf({ keys: undefined, uniqKey: undefined, propertiesString: decoded.propertiesString });
    entries.push({
      topic: decoded.topic, queueId: decoded.queueId, queueOffset: decoded.queueOffset, commitLogOffset: recordStart, sizeBytes: size,
      tagsCode: tagsCodeOf(decoded.topic, decoded.propertiesString, decoded.storeTimestamp, delayLevelsMs), storeTimestamp: decoded.storeTimestamp,
      queued: isQueuedTransactionType(decoded.sysFlag), sysFlag: decoded.sysFlag, keys: ik.keys, uniqKey: ik.uniqKey,
      propertiesString: decoded.propertiesString,
    });
    lastStoreTimestamp = decoded.storeTimestamp;
    recordStart += size;
    carry = null;
  }
  return { ok: true, entries, state: { recordStart, carry }, lastStoreTimestamp };
}

const lengthOf = (pieces: readonly Buffer[]): number => pieces.reduce((n, p) => n + p.length, 0);

/**
 * One record's bytes as the carried pieces followed by the frame from `fromFrame` on, read without joining them:
 * a 64 KiB record cut by 32 KiB frames used to be copied twice (the carry, then the joined record) only to read its
 * header and properties.
 */
class RecordBytes {
  constructor(
    private readonly carry: readonly Buffer[] | null,
    private readonly carried: number,
    private readonly frame: Buffer,
    private readonly fromFrame: number,
  ) {}

  /** Bytes [at, at+n) of the record: a view when they lie in one piece, else a small copy. */
  bytes(at: number, n: number): Buffer {
    if (!this.carry) return this.frame.subarray(this.fromFrame + at, this.fromFrame + at + n);
    if (at >= this.carried) return this.frame.subarray(at - this.carried, at - this.carried + n);
    const out = Buffer.allocUnsafe(n);
    let done = 0;
    let pos = 0;
    for (const p of [...this.carry, this.frame]) {
      if (done === n) break;
      const from = Math.max(0, at + done - pos);
      if (from < p.length) {
        const k = Math.min(p.length - from, n - done);
        p.copy(out, done, from, from + k);
        done += k;
      }
      pos += p.length;
    }
    return out;
  }

  int32(at: number): number {
    return this.bytes(at, 4).readInt32BE(0);
  }

  /** The first `n` bytes as views (the carry of a record received in part). */
  pieces(n: number): Buffer[] {
    const out: Buffer[] = [];
    let left = n;
    for (const p of this.carry ?? []) {
      out.push(p);
      left -= p.length;
    }
    if (left > 0) out.push(this.frame.subarray(this.fromFrame, this.fromFrame + left));
    return out;
  }

  /**
   * The whole record (`size` bytes) for decodeRecord: a view when it lies in the frame; else its header and its tail
   * (topic, properties) joined with an empty body, the size fields set to match (the body is never read here).
   */
  withoutBody(size: number): Buffer {
    if (!this.carry) return this.frame.subarray(this.fromFrame, this.fromFrame + size);
    const sysFlag = this.int32(RecordPos.SYS_FLAG);
    const bodyLenAt = storeHostPos(sysFlag) + storeHostLength(sysFlag) + 4 + 8; // reconsumeTimes, preparedTransactionOffset
    const bodyLen = this.int32(bodyLenAt);
    const bodyAt = bodyLenAt + 4;
    if (bodyLen < 0 || bodyAt + bodyLen > size) throw new RangeError(`bad body length ${bodyLen}`);
    const head = this.bytes(0, bodyAt);
    const tail = this.bytes(bodyAt + bodyLen, size - bodyAt - bodyLen);
    const out = Buffer.concat([head, tail]);
    out.writeInt32BE(out.length, RecordPos.TOTAL_SIZE);
    out.writeInt32BE(0, bodyLenAt);
    return out;
  }
}
