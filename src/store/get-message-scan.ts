// What the pull path's two scans share (get-message.ts, get-message-filtered.ts): the read's state, Java's
// batch-full rule and the reads of the chosen records.
import type { GetStatus } from './types.js';
import type { StoreConfig } from './config.js';
import type { CommitLogPort } from './commit-log/port.js';
import type { ConsumeQueueStore } from './consume-queue/store.js';

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
  commitLog: CommitLogPort;
  cqStore: ConsumeQueueStore;
  config: StoreConfig;
  /** Bytes behind the log end still counted as "in memory" (Java: RAM × accessMessageInMemoryMaxRatio). */
  memoryBudgetBytes: number;
  /** Largest record size that can be valid. */
  maxRecordBytes: number;
}

/** DefaultMessageStore.isTheBatchFull */
export function isBatchFull(
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

/** One read's progress through its window of consume-queue entries. */
export interface Scan {
  readonly ctx: GetContext;
  readonly maxMsgNums: number;
  readonly maxPullBytes: number;
  readonly consumeQueueMatch: ((tagsCode: number) => boolean) | undefined;
  /** Commit-log offset of the last entry scanned (Java maxPhyOffsetPulling). */
  lastScannedCommitLogOffset: number;
  /** Queue offset after the last entry scanned. */
  nextBeginOffset: number;
  /** Entries pointing below this commit-log offset are passed over (the rest of a deleted file, rollNextFile). */
  skipBelow: number;
  /**
   * Why the last entry that gave no record was passed over, and its queue offset: Java sets the status at each
   * such entry while nothing is taken, so when nothing is taken the last one decides.
   */
  missStatus: GetStatus;
  missAt: number;
  /** Records chosen by the current pass (commit-log offsets, sizes) and the queue offset of the last one. */
  offsets: number[];
  sizes: number[];
  /** The commit-log-check scan's classification of the entries of its current pass (get-message-filtered.ts). */
  kinds: number[];
  lastChosenAt: number;
  /** Records taken so far. */
  records: Buffer[];
  totalBytes: number;
}

/** Records from the tail cache (zero-copy) or disk (nearby records merged into one read). */
export async function readRecords(
  commitLog: CommitLogPort, offsets: number[], sizes: number[], segmentSize: number, memoryBudgetBytes: number,
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
      // Only forward: a damaged entry pointing back (below the span's end) reads on its own.
      span && Math.floor(span.start / segmentSize) === Math.floor(off / segmentSize) &&
      off >= span.end && off - span.end <= mergeGap && off + size - span.start <= COLD_READ_MAX_SPAN_BYTES
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
