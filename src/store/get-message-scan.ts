// What the pull path's two scans share (get-message.ts, get-message-filtered.ts): the read's state, Java's
// batch-full rule and the reads of the chosen records.
import type { GetStatus } from './types.js';
import type { StoreConfig } from './config.js';
import type { CommitLogPort, ReadPins } from './commit-log/port.js';
import { READ_BLOCK_BYTES, READ_BLOCK_MIN_DENSITY, READ_BLOCK_MIN_RECORDS } from './commit-log/read-blocks.js';
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
  /** The pins of the tail-cache and block views taken so far (see GetResult.pins). */
  pins?: ReadPins;
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

/**
 * Reads whole the blocks of the log holding READ_BLOCK_MIN_RECORDS or more of the records still missing (one read
 * instead of one per record; the pulls of the other queues then find their records there), and takes those
 * records from them. A dense pull reads such blocks at once; a sparse one only the blocks that the sparse pulls
 * together (its own included) want enough of, or any while the last such blocks were used enough (ReadBlocks.want).
 */
async function loadBlocks(
  commitLog: CommitLogPort, offsets: number[], sizes: number[], out: Array<Buffer | null>, memoryBudgetBytes: number,
  pins: ReadPins | undefined, dense: boolean, at: number[] | undefined,
): Promise<void> {
  // block index -> [records missing in it, their bytes, offset of the first]
  const perBlock = new Map<number, [number, number, number]>();
  for (let i = 0; i < offsets.length; i++) {
    if (out[i]) continue;
    const block = Math.floor(offsets[i]! / READ_BLOCK_BYTES);
    const seen = perBlock.get(block);
    if (seen) {
      seen[0]++;
      seen[1] += sizes[i]!;
    } else {
      perBlock.set(block, [1, sizes[i]!, offsets[i]!]);
    }
  }
  let loaded = false;
  for (const [records, bytes, first] of perBlock.values()) {
    if (!dense && !(commitLog.wantBlock?.(first, bytes) ?? false)) continue;
    if (records < READ_BLOCK_MIN_RECORDS) continue;
    await commitLog.loadBlock!(first, commitLog.isInMemory(first, memoryBudgetBytes));
    loaded = true;
  }
  if (!loaded) return;
  for (let i = 0; i < offsets.length; i++) if (!out[i]) out[i] = fromBlock(commitLog, offsets[i]!, sizes[i]!, pins, at, i);
}

/** The record from a block read whole: a view, or with `at` the block's bytes and at[i] the record's place in them. */
function fromBlock(
  commitLog: CommitLogPort, offset: number, size: number, pins: ReadPins | undefined, at: number[] | undefined, i: number,
): Buffer | null {
  if (!at) return commitLog.readBlockCached?.(offset, size, pins) ?? null;
  const block = commitLog.blockHolding?.(offset, size, pins);
  if (!block) return null;
  at[i] = offset - block.start;
  return block.buf;
}

/**
 * Records from the tail cache (zero-copy), blocks read whole for dense pulls, or disk (nearby records merged into
 * one read). With `at`, a record found in a block read whole comes as the block's bytes, with its place in them in
 * at[i] (no view made per record: see CommitLogPort.blockHolding); at[i] is -1 where out[i] is the record itself.
 */
export async function readRecords(
  ctx: GetContext, offsets: number[], sizes: number[], pins: ReadPins | undefined, at?: number[],
): Promise<Array<Buffer | null>> {
  const { commitLog, memoryBudgetBytes } = ctx;
  const segmentSize = ctx.config.mappedFileSizeCommitLog;
  const readAhead = ctx.config.dataReadAheadEnable;
  const out: Array<Buffer | null> = new Array(offsets.length).fill(null);
  if (at) {
    at.length = offsets.length;
    at.fill(-1);
  }
  let missing = 0;
  let missingBytes = 0;
  let spanStart = Infinity;
  let spanEnd = 0;
  for (let i = 0; i < offsets.length; i++) {
    const cached = commitLog.readCached(offsets[i]!, sizes[i]!, pins) ?? fromBlock(commitLog, offsets[i]!, sizes[i]!, pins, at, i);
    if (cached) {
      out[i] = cached;
      continue;
    }
    missing++;
    missingBytes += sizes[i]!;
    spanStart = Math.min(spanStart, offsets[i]!);
    spanEnd = Math.max(spanEnd, offsets[i]! + sizes[i]!);
  }
  // Blocks pay when the queues read side by side use most of them: a pull whose records fill at least
  // 1/READ_BLOCK_MIN_DENSITY of the stretch they lie in (16 interleaved queues: 1/16) reads them at once. A
  // filtered pull taking 1 record in 8 of that (1/128) reads record by record unless the other pulls want enough
  // of the same blocks too: alone, its blocks would be mostly bytes nobody takes.
  if (readAhead && missing >= READ_BLOCK_MIN_RECORDS && commitLog.loadBlock) {
    const dense = missingBytes * READ_BLOCK_MIN_DENSITY >= spanEnd - spanStart;
    await loadBlocks(commitLog, offsets, sizes, out, memoryBudgetBytes, pins, dense, at);
  }
  // likelyCached: the span's first record is within the page-cache window (decides how the read runs)
  const spans: Array<{ start: number; end: number; first: number; last: number; likelyCached: boolean }> = [];
  for (let i = 0; i < offsets.length; i++) {
    if (out[i]) continue;
    const off = offsets[i]!;
    const size = sizes[i]!;
    const span = spans[spans.length - 1];
    const inMemory = commitLog.isInMemory(off, memoryBudgetBytes);
    const mergeGap = inMemory || !readAhead ? CACHED_READ_MERGE_GAP_BYTES : COLD_READ_MERGE_GAP_BYTES;
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
