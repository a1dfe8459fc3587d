// Pull path: DefaultMessageStore.getMessage. Outcome table (remoting-protocol.md §4.2):
//   queue empty / unknown      -> NO_MESSAGE_IN_QUEUE, next 0
//   offset < min               -> OFFSET_TOO_SMALL, next min
//   offset == max              -> OFFSET_OVERFLOW_ONE, next offset
//   offset > max               -> OFFSET_OVERFLOW_BADLY, next max
//   entries scanned            -> FOUND / NO_MATCHED_MESSAGE / MESSAGE_WAS_REMOVING, next after the last scanned
// A filter's two checks (MessageFilter) are applied while scanning, as Java applies them: rejected records are
// passed over and count against neither maxMsgNums nor the byte limits.
//   consume-queue unreadable   -> OFFSET_FOUND_NULL, next = start of the next consume-queue file
import type { GetResult, GetStatus, MessageFilter } from './types.js';
import type { StoreConfig } from './config.js';
import { CQ_UNIT_SIZE } from './config.js';
import type { CommitLogPort, ReadPins } from './commit-log/port.js';
import type { ConsumeQueueStore } from './consume-queue/store.js';
import { readInt64, readRecordProperties } from './record.js';
import { READ_BLOCK_BYTES, READ_BLOCK_MIN_RECORDS } from './commit-log/read-blocks.js';

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
  commitLog: CommitLogPort;
  cqStore: ConsumeQueueStore;
  config: StoreConfig;
  /** Bytes behind the log end still counted as "in memory" (Java: RAM × accessMessageInMemoryMaxRatio). */
  memoryBudgetBytes: number;
  /** Largest record size that can be valid. */
  maxRecordBytes: number;
}

function outcome(status: GetStatus, nextBeginOffset: number, minOffset: number, maxOffset: number): GetResult {
  return { status, nextBeginOffset, minOffset, maxOffset, records: [], totalBytes: 0, suggestPullingFromSlave: false };
}

/** DefaultMessageStore.nextOffsetCorrection: a slave keeps the asked offset unless offsetCheckInSlave. */
function corrected(config: StoreConfig, asked: number, next: number): number {
  return config.brokerRole !== 'SLAVE' || config.offsetCheckInSlave ? next : asked;
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
  filter?: MessageFilter,
): Promise<GetResult> {
  const { config } = ctx;
  const cq = ctx.cqStore.find(topic, queueId);
  // Java creates the queue on lookup, so an unknown queue answers like an empty one.
  if (!cq) return outcome('NO_MESSAGE_IN_QUEUE', corrected(config, offset, 0), 0, 0);
  const min = cq.minOffset;
  const max = cq.maxOffset;
  if (max === 0) return outcome('NO_MESSAGE_IN_QUEUE', corrected(config, offset, 0), min, max);
  if (offset < min) return outcome('OFFSET_TOO_SMALL', corrected(config, offset, min), min, max);
  if (offset === max) return outcome('OFFSET_OVERFLOW_ONE', offset, min, max);
  if (offset > max) return outcome('OFFSET_OVERFLOW_BADLY', corrected(config, offset, max), min, max);

  // A filter may reject entries, so it scans up to maxFilterMessageSize worth of them (Java's window); without
  // one every entry is taken and maxMsgNums are enough (a read of 640 bytes instead of 16 KB per pull).
  const maxScan = filter ? Math.max(Math.floor(config.maxFilterMessageSize / CQ_UNIT_SIZE), maxMsgNums) : maxMsgNums;
  const windowEnd = offset + Math.min(maxScan, max - offset);
  // No await between taking an in-memory view and scanning it: the view may move once we yield.
  const first = cq.entriesInMemory(offset, windowEnd - offset) ?? (await cq.readEntriesFromDisk(offset, windowEnd - offset));
  if (!first) return outcome('OFFSET_FOUND_NULL', corrected(config, offset, cq.rollNextFile(offset)), min, max);

  const commitLogMatch = filter?.isMatchedByCommitLog;
  const s: Scan = {
    ctx, maxMsgNums, maxPullBytes: Math.min(Math.max(maxTotalBytes, 100), MAX_PULL_TOTAL_BYTES),
    consumeQueueMatch: filter?.isMatchedByConsumeQueue, nextBeginOffset: offset, skipBelow: -1,
    missStatus: 'NO_MATCHED_MESSAGE', missAt: -1, offsets: [], sizes: [], lastChosenAt: -1, records: [], totalBytes: 0,
    lastScannedCommitLogOffset: 0, pins: undefined,
  };
  let entries: Buffer = first;
  let entriesAt = offset; // queue offset of entries[0]
  let from = 0;
  for (;;) {
    const n: number = entries.length / CQ_UNIT_SIZE;
    const stop = scanEntries(s, entries, entriesAt, from);
    if (commitLogMatch && stop < n) {
      // The scan may go on after the reads below: keep the rest of the window in a buffer of our own.
      entries = Buffer.from(entries.subarray(stop * CQ_UNIT_SIZE));
      entriesAt += stop;
      from = 0;
    } else {
      from = stop;
    }
    s.pins ??= ctx.commitLog.newReadPins?.();
    const read = await readRecords(ctx.commitLog, s.offsets, s.sizes, config.mappedFileSizeCommitLog, ctx.memoryBudgetBytes, s.pins);
    const passedOver = takeRecords(s, read, commitLogMatch);
    // Without a commit-log check the scan counted exactly the records taken (or gone): one pass is Java's answer.
    if (!commitLogMatch) break;
    if (stop < n) {
      if (passedOver === 0) break; // the batch is full
      continue; // rejected records left room: scan on from where the full batch stopped
    }
    // This part of the window is spent (a file or the in-memory tail begins): read on up to the window's end, as
    // the broker-side loop this replaced did (Java's mapped-file iterator stops at a consume-queue file's end).
    const at: number = entriesAt + n;
    if (at >= windowEnd) break;
    const more: Buffer | null = cq.entriesInMemory(at, windowEnd - at) ?? (await cq.readEntriesFromDisk(at, windowEnd - at));
    if (!more) break;
    entries = more;
    entriesAt = at;
    from = 0;
  }
  const status: GetStatus = s.records.length > 0 ? 'FOUND' : s.missStatus;
  // Java: how far the last entry looked at lies behind the log's end, against the in-memory budget.
  const suggestPullingFromSlave = ctx.commitLog.writtenOffset - s.lastScannedCommitLogOffset > ctx.memoryBudgetBytes;
  return {
    status, nextBeginOffset: s.nextBeginOffset, minOffset: min, maxOffset: max, records: s.records, totalBytes: s.totalBytes,
    suggestPullingFromSlave, pins: s.pins,
  };
}

/** One read's progress through its window of consume-queue entries. */
interface Scan {
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
  /** The tail-cache views taken so far (see GetResult.pins). */
  pins?: ReadPins;
  /** Records chosen by the current pass (commit-log offsets, sizes) and the queue offset of the last one. */
  offsets: number[];
  sizes: number[];
  lastChosenAt: number;
  /** Records taken so far. */
  records: Buffer[];
  totalBytes: number;
}

/**
 * Scans entries[from..] (synchronously), choosing the records to read as though every one of them will be taken
 * (so the batch limits stop the scan no later than Java's, which counts only taken records). Returns the index
 * of the first entry not scanned: below the entry count when the batch is full.
 */
function scanEntries(s: Scan, entries: Buffer, entriesAt: number, from: number): number {
  const { commitLog, config } = s.ctx;
  const segmentSize = config.mappedFileSizeCommitLog;
  const minOffset = commitLog.minOffset;
  const writtenOffset = commitLog.writtenOffset;
  const match = s.consumeQueueMatch;
  let bytes = s.totalBytes;
  let count = s.records.length;
  const n = entries.length / CQ_UNIT_SIZE;
  let i = from;
  for (; i < n; i++) {
    const p = i * CQ_UNIT_SIZE;
    const clOffset = readInt64(entries, p);
    const size = entries.readInt32BE(p + 8);
    const inMemory = commitLog.isInMemory(clOffset, s.ctx.memoryBudgetBytes);
    if (isBatchFull(config, size, s.maxMsgNums, s.maxPullBytes, bytes, count, inMemory)) break;
    if (bytes >= s.maxPullBytes) break;
    const queueOffset = entriesAt + i;
    s.nextBeginOffset = queueOffset + 1;
    s.lastScannedCommitLogOffset = clOffset;
    if (clOffset < s.skipBelow) continue;
    if (match && !match(readInt64(entries, p + 12))) {
      s.missStatus = 'NO_MATCHED_MESSAGE';
      s.missAt = queueOffset;
      continue;
    }
    if (size <= 0 || size > s.ctx.maxRecordBytes || clOffset < minOffset || clOffset + size > writtenOffset) {
      // Deleted commit-log data (or a placeholder entry): skip, and past the rest of that file (rollNextFile).
      s.missStatus = 'MESSAGE_WAS_REMOVING';
      s.missAt = queueOffset;
      if (clOffset < minOffset) s.skipBelow = clOffset + segmentSize - (clOffset % segmentSize);
      continue;
    }
    s.offsets.push(clOffset);
    s.sizes.push(size);
    s.lastChosenAt = queueOffset;
    bytes += size;
    count++;
  }
  return i;
}

/**
 * Takes the records read for the current pass that are whole and pass the commit-log check, clears the pass,
 * and returns how many were passed over.
 */
function takeRecords(
  s: Scan, read: Array<Buffer | null>, match: MessageFilter['isMatchedByCommitLog'],
): number {
  let passedOver = 0;
  let lastMiss: GetStatus | null = null;
  for (let i = 0; i < read.length; i++) {
    const r = read[i];
    // The record must start with the size the consume queue recorded.
    if (!r || r.readInt32BE(0) !== s.sizes[i]) {
      passedOver++;
      lastMiss = 'MESSAGE_WAS_REMOVING';
      continue;
    }
    if (match && !matchesByCommitLog(match, r)) {
      passedOver++;
      lastMiss = 'NO_MATCHED_MESSAGE';
      continue;
    }
    s.records.push(r);
    s.totalBytes += r.length;
    lastMiss = null;
  }
  if (lastMiss && s.lastChosenAt > s.missAt) {
    s.missStatus = lastMiss;
    s.missAt = s.lastChosenAt;
  }
  s.offsets.length = 0;
  s.sizes.length = 0;
  return passedOver;
}

/** A record whose properties cannot be read is delivered rather than lost. */
function matchesByCommitLog(match: NonNullable<MessageFilter['isMatchedByCommitLog']>, record: Buffer): boolean {
  let propertiesString: string;
  try {
    propertiesString = readRecordProperties(record);
  } catch {
    return true;
  }
  return match(record, propertiesString);
}

/**
 * Reads whole the blocks of the log holding READ_BLOCK_MIN_RECORDS or more of the records still missing (one read
 * instead of one per record; the pulls of the other queues then find their records there), and takes those
 * records from them.
 */
async function loadDenseBlocks(
  commitLog: CommitLogPort, offsets: number[], sizes: number[], out: Array<Buffer | null>, memoryBudgetBytes: number,
): Promise<void> {
  // block index -> [records missing in it, offset of the first]
  const perBlock = new Map<number, [number, number]>();
  for (let i = 0; i < offsets.length; i++) {
    if (out[i]) continue;
    const block = Math.floor(offsets[i]! / READ_BLOCK_BYTES);
    const seen = perBlock.get(block);
    if (seen) seen[0]++;
    else perBlock.set(block, [1, offsets[i]!]);
  }
  let loaded = false;
  for (const [records, first] of perBlock.values()) {
    if (records < READ_BLOCK_MIN_RECORDS) continue;
    await commitLog.loadBlock!(first, commitLog.isInMemory(first, memoryBudgetBytes));
    loaded = true;
  }
  if (!loaded) return;
  for (let i = 0; i < offsets.length; i++) out[i] ??= commitLog.readBlockCached!(offsets[i]!, sizes[i]!) ?? null;
}

/** Records from the tail cache (zero-copy), blocks read whole for dense pulls, or disk (nearby records merged into one read). */
async function readRecords(
  commitLog: CommitLogPort, offsets: number[], sizes: number[], segmentSize: number, memoryBudgetBytes: number,
  pins: ReadPins | undefined,
): Promise<Array<Buffer | null>> {
  const out: Array<Buffer | null> = new Array(offsets.length).fill(null);
  let missing = 0;
  for (let i = 0; i < offsets.length; i++) {
    const cached = commitLog.readCached(offsets[i]!, sizes[i]!, pins) ?? commitLog.readBlockCached?.(offsets[i]!, sizes[i]!);
    if (cached) out[i] = cached;
    else missing++;
  }
  if (missing >= READ_BLOCK_MIN_RECORDS && commitLog.loadBlock) await loadDenseBlocks(commitLog, offsets, sizes, out, memoryBudgetBytes);
  // likelyCached: the span's first record is within the page-cache window (decides how the read runs)
  const spans: Array<{ start: number; end: number; first: number; last: number; likelyCached: boolean }> = [];
  for (let i = 0; i < offsets.length; i++) {
    if (out[i]) continue;
    const off = offsets[i]!;
    const size = sizes[i]!;
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
