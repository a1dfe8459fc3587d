// The pull path's scan when the filter needs the commit log (SQL92: Java ExpressionMessageFilter.isMatchedByCommitLog).
// Java walks the window entry by entry: batch-full check, consume-queue check, read the record, commit-log check,
// take. We do the same walk in order, but read the records ahead in passes of many candidates (one await per
// pass, not per record): with 1 match in 8, a pull of 32 needs ~256 candidates, and passes sized by what is still
// missing (32, 28, 25, ...) took ~25 awaits and small reads per pull. A pass may read records the walk then does
// not reach (the batch filled): those are dropped unexamined, so the answer is the one the entry-by-entry walk gives.
import type { GetStatus, MessageFilter } from './types.js';
import { CQ_UNIT_SIZE } from './config.js';
import type { ConsumeQueue } from './consume-queue/consume-queue.js';
import { readInt64, recordPropertiesAt } from './record.js';
import { type Scan, isBatchFull, readRecords } from './get-message-scan.js';

/** At most this many records are read ahead in one pass (and at most PASS_MAX_BYTES of them, at least one). */
const PASS_MAX_CANDIDATES = 256;
const PASS_MAX_BYTES = 1024 * 1024;

/** What the checks made before the read say about an entry. */
const enum Kind { SKIPPED, CQ_MISS, REMOVED, REMOVED_FILE, CANDIDATE }

/** A part of the window (in-memory view or disk read) decoded into plain arrays, so the scan can await. */
interface EntryPart {
  /** Queue offset of the first entry. */
  at: number;
  n: number;
  clOffsets: number[];
  sizes: number[];
  tagsCodes: number[];
}

function decodeEntries(buf: Buffer, at: number): EntryPart {
  const n = buf.length / CQ_UNIT_SIZE;
  const clOffsets: number[] = new Array(n);
  const sizes: number[] = new Array(n);
  const tagsCodes: number[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const p = i * CQ_UNIT_SIZE;
    clOffsets[i] = readInt64(buf, p);
    sizes[i] = buf.readInt32BE(p + 8);
    tagsCodes[i] = readInt64(buf, p + 12);
  }
  return { at, n, clOffsets, sizes, tagsCodes };
}

/** The commit-log check of one record (see recordMatcher). */
type CommitLogMatch = (record: Buffer) => boolean;

/** Scans [offset, windowEnd) in order, taking the records both checks accept, until the batch is full. */
export async function scanWithCommitLogCheck(
  s: Scan, cq: ConsumeQueue, first: Buffer, offset: number, windowEnd: number, match: CommitLogMatch,
): Promise<void> {
  let part = decodeEntries(first, offset);
  let j = 0;
  let checked = 0; // candidates the commit-log check was asked about, and how many it took: sizes the next pass
  let taken = 0;
  for (;;) {
    if (j >= part.n) {
      // This part of the window is spent (a file or the in-memory tail begins): read on up to the window's end
      // (Java's mapped-file iterator stops at a consume-queue file's end).
      const at = part.at + part.n;
      if (at >= windowEnd) return;
      const more = cq.entriesInMemory(at, windowEnd - at) ?? (await cq.readEntriesFromDisk(at, windowEnd - at));
      if (!more) return;
      part = decodeEntries(more, at);
      j = 0;
      continue;
    }
    // At least one: a batch taken full at a pass's last entry stops at the next entry's batch-full check.
    const room = Math.max(1, s.maxMsgNums - s.records.length);
    const want = checked === 0
      ? room
      : Math.min(PASS_MAX_CANDIDATES, Math.max(room, Math.ceil((room * checked) / Math.max(taken, 1))));
    const end = classify(s, part, j, want);
    s.pins ??= s.ctx.commitLog.newReadPins?.();
    const read = await readRecords(
      s.ctx.commitLog, s.offsets, s.sizes, s.ctx.config.mappedFileSizeCommitLog, s.ctx.memoryBudgetBytes, s.pins,
    );
    const before = s.records.length;
    const walk = applyInOrder(s, part, j, end, read, match);
    checked += walk.checked;
    taken += s.records.length - before;
    s.offsets.length = 0;
    s.sizes.length = 0;
    s.kinds.length = 0;
    if (walk.full) return;
    j = end;
  }
}

/**
 * The checks before the read, for entries from `from` on, until `want` candidates (or PASS_MAX_BYTES of them) are
 * chosen: fills s.kinds (one per entry) and the candidates' s.offsets / s.sizes. Changes nothing else: the walk
 * makes the same decisions again, in order. Returns the index after the last entry classified.
 */
function classify(s: Scan, part: EntryPart, from: number, want: number): number {
  const { commitLog, config } = s.ctx;
  const segmentSize = config.mappedFileSizeCommitLog;
  const minOffset = commitLog.minOffset;
  const writtenOffset = commitLog.writtenOffset;
  const cqMatch = s.consumeQueueMatch;
  let skipBelow = s.skipBelow;
  let bytes = 0;
  let i = from;
  for (; i < part.n && s.offsets.length < want && bytes < PASS_MAX_BYTES; i++) {
    const clOffset = part.clOffsets[i]!;
    const size = part.sizes[i]!;
    if (clOffset < skipBelow) {
      s.kinds.push(Kind.SKIPPED);
    } else if (cqMatch && !cqMatch(part.tagsCodes[i]!)) {
      s.kinds.push(Kind.CQ_MISS);
    } else if (size <= 0 || size > s.ctx.maxRecordBytes || clOffset < minOffset || clOffset + size > writtenOffset) {
      // Below the log's start: the rest of that deleted file is passed over (rollNextFile).
      s.kinds.push(clOffset < minOffset ? Kind.REMOVED_FILE : Kind.REMOVED);
      if (clOffset < minOffset) skipBelow = clOffset + segmentSize - (clOffset % segmentSize);
    } else {
      s.kinds.push(Kind.CANDIDATE);
      s.offsets.push(clOffset);
      s.sizes.push(size);
      bytes += size;
    }
  }
  return i;
}

/** Java's walk over entries [from, end) with the records read; `full`: the batch filled before `end`. */
function applyInOrder(
  s: Scan, part: EntryPart, from: number, end: number, read: Array<Buffer | null>, match: CommitLogMatch,
): { full: boolean; checked: number } {
  const { commitLog, config } = s.ctx;
  const segmentSize = config.mappedFileSizeCommitLog;
  let c = 0; // next candidate's index in read
  let checked = 0;
  for (let i = from; i < end; i++) {
    const clOffset = part.clOffsets[i]!;
    const size = part.sizes[i]!;
    const inMemory = commitLog.isInMemory(clOffset, s.ctx.memoryBudgetBytes);
    if (isBatchFull(config, size, s.maxMsgNums, s.maxPullBytes, s.totalBytes, s.records.length, inMemory)) return { full: true, checked };
    if (s.totalBytes >= s.maxPullBytes) return { full: true, checked };
    const queueOffset = part.at + i;
    s.nextBeginOffset = queueOffset + 1;
    s.lastScannedCommitLogOffset = clOffset;
    let miss: GetStatus;
    switch (s.kinds[i - from]) {
      case Kind.SKIPPED:
        continue;
      case Kind.CQ_MISS:
        miss = 'NO_MATCHED_MESSAGE';
        break;
      case Kind.REMOVED:
        miss = 'MESSAGE_WAS_REMOVING';
        break;
      case Kind.REMOVED_FILE:
        miss = 'MESSAGE_WAS_REMOVING';
        s.skipBelow = clOffset + segmentSize - (clOffset % segmentSize);
        break;
      default: {
        const r = read[c]!;
        const expectedSize = s.sizes[c]!;
        c++;
        // The record must start with the size the consume queue recorded.
        if (!r || r.readInt32BE(0) !== expectedSize) {
          miss = 'MESSAGE_WAS_REMOVING';
          break;
        }
        checked++;
        if (!match(r)) {
          miss = 'NO_MATCHED_MESSAGE';
          break;
        }
        s.records.push(r);
        s.totalBytes += r.length;
        s.lastChosenAt = queueOffset;
        continue;
      }
    }
    s.missStatus = miss;
    s.missAt = queueOffset;
  }
  return { full: false, checked };
}

/**
 * The filter's commit-log check as one function of the record (undefined when it has none). A record whose
 * properties cannot be read is delivered rather than lost.
 */
export function recordMatcher(filter: MessageFilter | undefined): CommitLogMatch | undefined {
  const byString = filter?.isMatchedByCommitLog;
  if (!byString) return undefined;
  const byBytes = filter.isMatchedByPropertyBytes;
  if (byBytes) {
    return (record) => {
      let start: number;
      try {
        start = recordPropertiesAt(record);
      } catch {
        return true;
      }
      return byBytes(record, start, start + record.readInt16BE(start - 2));
    };
  }
  return (record) => {
    let start: number;
    try {
      start = recordPropertiesAt(record);
    } catch {
      return true;
    }
    const len = record.readInt16BE(start - 2);
    return byString(record, len > 0 ? record.toString('utf8', start, start + len) : '');
  };
}
