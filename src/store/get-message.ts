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
import { int32At, int64At } from './record.js';
import { type GetContext, type Scan, isBatchFull, readRecords } from './get-message-scan.js';
import { recordMatcher, scanWithCommitLogCheck } from './get-message-filtered.js';

export type { GetContext } from './get-message-scan.js';

/** Java caps a pull at 128 MiB; Java clients reject frames over 16 MiB, so stay well below that. */
export const MAX_PULL_TOTAL_BYTES = 15 * 1024 * 1024;

function outcome(status: GetStatus, nextBeginOffset: number, minOffset: number, maxOffset: number): GetResult {
  return { status, nextBeginOffset, minOffset, maxOffset, records: [], totalBytes: 0, suggestPullingFromSlave: false };
}

/** DefaultMessageStore.nextOffsetCorrection: a slave keeps the asked offset unless offsetCheckInSlave. */
function corrected(config: StoreConfig, asked: number, next: number): number {
  return config.brokerRole !== 'SLAVE' || config.offsetCheckInSlave ? next : asked;
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
  const first = cq.entriesInMemory(offset, windowEnd - offset) ?? (await cq.readEntriesFromDisk(offset, windowEnd - offset, true));
  if (!first) return outcome('OFFSET_FOUND_NULL', corrected(config, offset, cq.rollNextFile(offset)), min, max);

  const s: Scan = {
    ctx, maxMsgNums, maxPullBytes: Math.min(Math.max(maxTotalBytes, 100), MAX_PULL_TOTAL_BYTES),
    consumeQueueMatch: filter?.isMatchedByConsumeQueue, nextBeginOffset: offset, skipBelow: -1,
    missStatus: 'NO_MATCHED_MESSAGE', missAt: -1, offsets: [], sizes: [], kinds: [], lastChosenAt: -1, records: [],
    totalBytes: 0, lastScannedCommitLogOffset: 0,
  };
  const commitLogMatch = recordMatcher(filter);
  if (commitLogMatch) {
    await scanWithCommitLogCheck(s, cq, first, offset, windowEnd, commitLogMatch);
  } else {
    // Without a commit-log check the scan counts exactly the records taken (or gone): one pass is Java's answer.
    scanEntries(s, first, offset, 0);
    s.pins = ctx.commitLog.newReadPins?.();
    takeRecords(s, await readRecords(ctx, s.offsets, s.sizes, s.pins));
  }
  const status: GetStatus = s.records.length > 0 ? 'FOUND' : s.missStatus;
  // Nothing taken: no view of the log's memory leaves here (an answer that is parked may never release them).
  if (s.records.length === 0 && s.pins) {
    s.pins.release();
    s.pins = undefined;
  }
  // Java: how far the last entry looked at lies behind the log's end, against the in-memory budget.
  const suggestPullingFromSlave = ctx.commitLog.writtenOffset - s.lastScannedCommitLogOffset > ctx.memoryBudgetBytes;
  return {
    status, nextBeginOffset: s.nextBeginOffset, minOffset: min, maxOffset: max, records: s.records, totalBytes: s.totalBytes,
    suggestPullingFromSlave, pins: s.pins,
  };
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
  const n = Math.floor(entries.length / CQ_UNIT_SIZE); // whole entries only: the reads below are unchecked
  let i = from;
  for (; i < n; i++) {
    const p = i * CQ_UNIT_SIZE;
    const clOffset = int64At(entries, p);
    const size = int32At(entries, p + 8);
    const inMemory = commitLog.isInMemory(clOffset, s.ctx.memoryBudgetBytes);
    if (isBatchFull(config, size, s.maxMsgNums, s.maxPullBytes, bytes, count, inMemory)) break;
    if (bytes >= s.maxPullBytes) break;
    const queueOffset = entriesAt + i;
    s.nextBeginOffset = queueOffset + 1;
    s.lastScannedCommitLogOffset = clOffset;
    if (clOffset < s.skipBelow) continue;
    if (match && !match(int64At(entries, p + 12))) {
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

/** Takes the records read that are whole (they start with the size the consume queue recorded). */
function takeRecords(s: Scan, read: Array<Buffer | null>): void {
  let lastMiss = false;
  for (let i = 0; i < read.length; i++) {
    const r = read[i];
    if (!r || r.readInt32BE(0) !== s.sizes[i]) {
      lastMiss = true;
      continue;
    }
    s.records.push(r);
    s.totalBytes += r.length;
    lastMiss = false;
  }
  if (lastMiss && s.lastChosenAt > s.missAt) {
    s.missStatus = 'MESSAGE_WAS_REMOVING';
    s.missAt = s.lastChosenAt;
  }
  s.offsets.length = 0;
  s.sizes.length = 0;
}
