// Pull path: DefaultMessageStore.getMessage. Outcome table (remoting-protocol.md §4.2):
//   queue empty / unknown      -> NO_MESSAGE_IN_QUEUE, next 0
//   offset < min               -> OFFSET_TOO_SMALL, next min
//   offset == max              -> OFFSET_OVERFLOW_ONE, next offset
//   offset > max               -> OFFSET_OVERFLOW_BADLY, next max
//   entries scanned            -> FOUND / NO_MATCHED_MESSAGE / MESSAGE_WAS_REMOVING, next after the last scanned
//   consume-queue unreadable   -> OFFSET_FOUND_NULL, next = start of the next consume-queue file
import type { GetResult, GetStatus, TagsCodeFilter } from './types.js';
import type { StoreConfig } from './config.js';
import { CQ_UNIT_SIZE } from './config.js';
import type { CommitLog } from './commit-log/commit-log.js';
import type { ConsumeQueueStore } from './consume-queue/store.js';
import { readInt64 } from './record.js';

/** Java caps a pull at 128 MiB; Java clients reject frames over 16 MiB, so stay well below that. */
export const MAX_PULL_TOTAL_BYTES = 15 * 1024 * 1024;
/**
 * Records read from disk are merged into one read when the gap between them is at most this. The records of one
 * queue are interleaved with those of every other queue written at the same time (16 queues: ~15 records
 * between two of ours), so a wide gap reads 15x the bytes a pull needs. That pays for a disk read (one I/O instead
 * of 32) but not for a page-cache read, which is a copy: there only records (nearly) next to each other merge.
 */
const COLD_READ_MERGE_GAP_BYTES = 64 * 1024;
const CACHED_READ_MERGE_GAP_BYTES = 512;
const COLD_READ_MAX_SPAN_BYTES = 4 * 1024 * 1024;

export interface GetContext {
  commitLog: CommitLog;
  cqStore: ConsumeQueueStore;
  config: StoreConfig;
  /** Bytes behind the log end still counted as "in memory" (Java: RAM × accessMessageInMemoryMaxRatio). */
  memoryBudgetBytes: number;
  /** Largest record size that can be valid. */
  maxRecordBytes: number;
}

function outcome(status: GetStatus, nextBeginOffset: number, minOffset: number, maxOffset: number): GetResult {
  return { status, nextBeginOffset, minOffset, maxOffset, records: [], totalBytes: 0 };
}

/** DefaultMessageStore.isTheBatchFull */
function isBatchFull(
  cfg: StoreConfig, sizePy: number, maxMsgNums: number, maxPullBytes: number,
  bufferTotal: number, messageTotal: number, inMemory: boolean,
): boolean {
  if (bufferTotal === 0 || messageTotal === 0) return false;
  if (messageTotal + 1 > maxMsgNums) return true;
  if (bufferTotal + sizePy > maxPullBytes) return true;
  if (inMemory) {
    if (bufferTotal + sizePy > cfg.maxTransferBytesOnMessageInMemory) return true;
    return messageTotal > cfg.maxTransferCountOnMessageInMemory - 1;
  }
  if (bufferTotal + sizePy > cfg.maxTransferBytesOnMessageInDisk) return true;
  return messageTotal > cfg.maxTransferCountOnMessageInDisk - 1;
}

export async function getMessage(
  ctx: GetContext, topic: string, queueId: number, offset: number, maxMsgNums: number, maxTotalBytes: number,
  filter?: TagsCodeFilter,
): Promise<GetResult> {
  const { commitLog, config } = ctx;
  const cq = ctx.cqStore.find(topic, queueId);
  // Java creates the queue on lookup, so an unknown queue answers like an empty one.
  if (!cq) return outcome('NO_MESSAGE_IN_QUEUE', 0, 0, 0);
  const min = cq.minOffset;
  const max = cq.maxOffset;
  if (max === 0) return outcome('NO_MESSAGE_IN_QUEUE', 0, min, max);
  if (offset < min) return outcome('OFFSET_TOO_SMALL', min, min, max);
  if (offset === max) return outcome('OFFSET_OVERFLOW_ONE', offset, min, max);
  if (offset > max) return outcome('OFFSET_OVERFLOW_BADLY', max, min, max);

  // A filter may reject entries, so it scans up to maxFilterMessageSize worth of them (Java's window); without
  // one every entry is taken and maxMsgNums are enough (a read of 640 bytes instead of 16 KB per pull).
  const maxScan = filter ? Math.max(Math.floor(config.maxFilterMessageSize / CQ_UNIT_SIZE), maxMsgNums) : maxMsgNums;
  const want = Math.min(maxScan, max - offset);
  let entries = cq.entriesInMemory(offset, want);
  if (!entries) {
    const fromDisk = await cq.readEntriesFromDisk(offset, want);
    if (!fromDisk) return outcome('OFFSET_FOUND_NULL', cq.rollNextFile(offset), min, max);
    entries = fromDisk;
  }

  // Parse synchronously: an in-memory view may move once we yield.
  const maxPullBytes = Math.min(Math.max(maxTotalBytes, 100), MAX_PULL_TOTAL_BYTES);
  const segmentSize = config.mappedFileSizeCommitLog;
  const offsets: number[] = [];
  const sizes: number[] = [];
  let status: GetStatus = 'NO_MATCHED_MESSAGE';
  let nextBeginOffset = offset;
  let total = 0;
  let skipBelow = -1;
  const n = entries.length / CQ_UNIT_SIZE;
  for (let i = 0; i < n; i++) {
    const p = i * CQ_UNIT_SIZE;
    const clOffset = readInt64(entries, p);
    const size = entries.readInt32BE(p + 8);
    const inMemory = commitLog.isInMemory(clOffset, ctx.memoryBudgetBytes);
    if (isBatchFull(config, size, maxMsgNums, maxPullBytes, total, offsets.length, inMemory)) break;
    if (total >= maxPullBytes) break;
    nextBeginOffset = offset + i + 1;
    if (clOffset < skipBelow) continue;
    if (filter && !filter(readInt64(entries, p + 12))) {
      if (total === 0) status = 'NO_MATCHED_MESSAGE';
      continue;
    }
    if (size <= 0 || size > ctx.maxRecordBytes || clOffset < commitLog.minOffset || clOffset + size > commitLog.writtenOffset) {
      // Deleted commit-log data (or a placeholder entry): skip, and past the rest of that file (rollNextFile).
      if (total === 0) status = 'MESSAGE_WAS_REMOVING';
      if (clOffset < commitLog.minOffset) skipBelow = clOffset + segmentSize - (clOffset % segmentSize);
      continue;
    }
    offsets.push(clOffset);
    sizes.push(size);
    total += size;
    status = 'FOUND';
  }

  const records = await readRecords(commitLog, offsets, sizes, segmentSize, ctx.memoryBudgetBytes);
  let totalBytes = 0;
  const valid: Buffer[] = [];
  for (let i = 0; i < records.length; i++) {
    const r = records[i];
    // The record must start with the size the consume queue recorded.
    if (r && r.readInt32BE(0) === sizes[i]) {
      valid.push(r);
      totalBytes += r.length;
    }
  }
  if (status === 'FOUND' && valid.length === 0) status = 'MESSAGE_WAS_REMOVING';
  return { status, nextBeginOffset, minOffset: min, maxOffset: max, records: valid, totalBytes };
}

/** Records from the tail cache (zero-copy) or disk (nearby records merged into one read). */
async function readRecords(
  commitLog: CommitLog, offsets: number[], sizes: number[], segmentSize: number, memoryBudgetBytes: number,
): Promise<Array<Buffer | null>> {
  const out: Array<Buffer | null> = new Array(offsets.length).fill(null);
  // likelyCached: the span's first record is within the page-cache window (decides how the read runs)
  const spans: Array<{ start: number; end: number; first: number; last: number; likelyCached: boolean }> = [];
  for (let i = 0; i < offsets.length; i++) {
    const off = offsets[i]!;
    const size = sizes[i]!;
    const cached = commitLog.readCached(off, size);
    if (cached) {
      out[i] = cached;
      continue;
    }
    const span = spans[spans.length - 1];
    const inMemory = commitLog.isInMemory(off, memoryBudgetBytes);
    const mergeGap = inMemory ? CACHED_READ_MERGE_GAP_BYTES : COLD_READ_MERGE_GAP_BYTES;
    if (
      span && Math.floor(span.start / segmentSize) === Math.floor(off / segmentSize) &&
      off - span.end <= mergeGap && off + size - span.start <= COLD_READ_MAX_SPAN_BYTES
    ) {
      span.end = off + size;
      span.last = i;
    } else {
      spans.push({ start: off, end: off + size, first: i, last: i, likelyCached: inMemory });
    }
  }
  await Promise.all(spans.map(async (s) => {
    const buf = await commitLog.read(s.start, s.end - s.start, s.likelyCached);
    if (!buf) return;
    for (let i = s.first; i <= s.last; i++) {
      if (out[i]) continue;
      const rel = offsets[i]! - s.start;
      out[i] = buf.subarray(rel, rel + sizes[i]!);
    }
  }));
  return out;
}
