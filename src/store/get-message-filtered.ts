// The pull path's scan when the filter needs the commit log (SQL92: Java ExpressionMessageFilter.isMatchedByCommitLog).
// Java walks the window entry by entry: batch-full check, consume-queue check, read the record, commit-log check,
// take. We do the same walk in order, but read the records ahead in passes of many candidates (one await per
// pass, not per record): with 1 match in 8, a pull of 32 needs ~256 candidates, and passes sized by what is still
// missing (32, 28, 25, ...) took ~25 awaits and small reads per pull. A pass may read records the walk then does
// not reach (the batch filled): those are dropped unexamined, so the answer is the one the entry-by-entry walk gives.
import type { GetStatus, MessageFilter } from './types.js';
import { CQ_UNIT_SIZE } from './config.js';
import type { ConsumeQueue } from './consume-queue/consume-queue.js';
import { int32At, int64At, recordPropertiesAt } from './record.js';
import { type Scan, isBatchFull, readRecords } from './get-message-scan.js';

/** At most this many records are read ahead in one pass (and at most PASS_MAX_BYTES of them, at least one). */
const PASS_MAX_CANDIDATES = 256;
const PASS_MAX_BYTES = 1024 * 1024;

/** What the checks made before the read say about an entry. */
const enum Kind { SKIPPED, CQ_MISS, REMOVED, REMOVED_FILE, CANDIDATE }

/**
 * A part of the window: consume-queue entries read straight from `buf` as the scan reaches them (a pull of 32 at
 * 1 in 8 uses ~260 of the window's 800). An in-memory view may move once the scan awaits (the tail is compacted
 * in place), so it is taken again after each await (see refresh); a disk read is the scan's own.
 */
interface EntryPart {
  /** Queue offset of the entry at buf[0]. */
  at: number;
  n: number;
  buf: Buffer;
  inMemory: boolean;
}

function entryPart(buf: Buffer, at: number, inMemory: boolean): EntryPart {
  // whole entries only: classify reads them unchecked
  return { at, n: Math.floor(buf.length / CQ_UNIT_SIZE), buf, inMemory };
}

/** The part again from its entry `j` on, once the scan has awaited; null if the entries cannot be read any more. */
async function refresh(cq: ConsumeQueue, part: EntryPart, j: number, windowEnd: number): Promise<EntryPart | null> {
  if (!part.inMemory || j >= part.n) return part;
  const at = part.at + j;
  const mem = cq.entriesInMemory(at, part.n - j);
  if (mem) return entryPart(mem, at, true);
  const disk = await cq.readEntriesFromDisk(at, Math.min(part.n - j, windowEnd - at), true);
  return disk ? entryPart(disk, at, false) : null;
}

/** The entries of the current pass (from `from` on): commit-log offsets and sizes, read once by classify. */
interface PassEntries {
  from: number;
  clOffsets: number[];
  sizes: number[];
}

/** The commit-log check of the record at buf[at] (see recordMatcher). */
type CommitLogMatch = (buf: Buffer, at: number) => boolean;

/** Scans [offset, windowEnd) in order, taking the records both checks accept, until the batch is full. */
export async function scanWithCommitLogCheck(
  s: Scan, cq: ConsumeQueue, first: Buffer, offset: number, windowEnd: number, match: CommitLogMatch,
): Promise<void> {
  // `first` is an in-memory view unless the window begins below the tail.
  let part: EntryPart | null = entryPart(first, offset, cq.entriesInMemory(offset, 1) !== undefined);
  let j = 0;
  let checked = 0; // candidates the commit-log check was asked about, and how many it took: sizes the next pass
  let taken = 0;
  const pass: PassEntries = { from: 0, clOffsets: [], sizes: [] };
  // Where each candidate lies in what readRecords gives for it (a block's bytes, or -1: the record itself).
  const at: number[] = [];
  for (;;) {
    if (j >= part.n) {
      // This part of the window is spent (a file or the in-memory tail begins): read on up to the window's end
      // (Java's mapped-file iterator stops at a consume-queue file's end).
      const at = part.at + part.n;
      if (at >= windowEnd) return;
      const mem = cq.entriesInMemory(at, windowEnd - at);
      const more = mem ?? (await cq.readEntriesFromDisk(at, windowEnd - at, true));
      if (!more) return;
      part = entryPart(more, at, mem !== undefined);
      j = 0;
      continue;
    }
    // At least one: a batch taken full at a pass's last entry stops at the next entry's batch-full check.
    const room = Math.max(1, s.maxMsgNums - s.records.length);
    const want = checked === 0
      ? room
      : Math.min(PASS_MAX_CANDIDATES, Math.max(room, Math.ceil((room * checked) / Math.max(taken, 1))));
    const end = classify(s, part, j, want, pass);
    s.pins ??= s.ctx.commitLog.newReadPins?.();
    const read = await readRecords(s.ctx, s.offsets, s.sizes, s.pins, at);
    const before = s.records.length;
    const walk = applyInOrder(s, part.at, pass, end, read, at, match);
    checked += walk.checked;
    taken += s.records.length - before;
    s.offsets.length = 0;
    s.sizes.length = 0;
    s.kinds.length = 0;
    pass.clOffsets.length = 0;
    pass.sizes.length = 0;
    if (walk.full) return;
    const next = await refresh(cq, part, end, windowEnd);
    if (!next) return;
    // A part taken again begins at entry `end` of the old one.
    j = next === part ? end : 0;
    part = next;
  }
}

/**
 * The checks before the read, for entries from `from` on, until `want` candidates (or PASS_MAX_BYTES of them) are
 * chosen: fills s.kinds (one per entry) and the candidates' s.offsets / s.sizes. Changes nothing else: the walk
 * makes the same decisions again, in order. Returns the index after the last entry classified.
 */
function classify(s: Scan, part: EntryPart, from: number, want: number, pass: PassEntries): number {
  const { commitLog, config } = s.ctx;
  const segmentSize = config.mappedFileSizeCommitLog;
  const minOffset = commitLog.minOffset;
  const writtenOffset = commitLog.writtenOffset;
  const cqMatch = s.consumeQueueMatch;
  let skipBelow = s.skipBelow;
  const buf = part.buf;
  pass.from = from;
  let bytes = 0;
  let i = from;
  for (; i < part.n && s.offsets.length < want && bytes < PASS_MAX_BYTES; i++) {
    const p = i * CQ_UNIT_SIZE;
    const clOffset = int64At(buf, p);
    const size = int32At(buf, p + 8);
    pass.clOffsets.push(clOffset);
    pass.sizes.push(size);
    if (clOffset < skipBelow) {
      s.kinds.push(Kind.SKIPPED);
    } else if (cqMatch && !cqMatch(int64At(buf, p + 12))) {
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

/**
 * Java's walk over the pass's entries [pass.from, end) of the part at partAt, with the records read (the record
 * of candidate c at read[c][at[c]], or read[c] itself where at[c] is -1); `full`: the batch filled before `end`.
 */
function applyInOrder(
  s: Scan, partAt: number, pass: PassEntries, end: number, read: Array<Buffer | null>, at: number[], match: CommitLogMatch,
): { full: boolean; checked: number } {
  const { commitLog, config } = s.ctx;
  const segmentSize = config.mappedFileSizeCommitLog;
  const from = pass.from;
  let c = 0; // next candidate's index in read
  let checked = 0;
  for (let i = from; i < end; i++) {
    const clOffset = pass.clOffsets[i - from]!;
    const size = pass.sizes[i - from]!;
    const inMemory = commitLog.isInMemory(clOffset, s.ctx.memoryBudgetBytes);
    if (isBatchFull(config, size, s.maxMsgNums, s.maxPullBytes, s.totalBytes, s.records.length, inMemory)) return { full: true, checked };
    if (s.totalBytes >= s.maxPullBytes) return { full: true, checked };
    const queueOffset = partAt + i;
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
        const r = read[c];
        const expectedSize = s.sizes[c]!;
        const inBlock = at[c]! >= 0;
        const pos = inBlock ? at[c]! : 0;
        c++;
        // The record must start with the size the consume queue recorded.
        if (!r || r.readInt32BE(pos) !== expectedSize) {
          miss = 'MESSAGE_WAS_REMOVING';
          break;
        }
        checked++;
        if (!match(r, pos)) {
          miss = 'NO_MATCHED_MESSAGE';
          break;
        }
        // Only a taken record is viewed on its own (a block's bytes stay pinned by the scan's pins).
        s.records.push(inBlock ? r.subarray(pos, pos + expectedSize) : r);
        s.totalBytes += expectedSize;
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
    return (buf, at) => {
      let start: number;
      try {
        start = recordPropertiesAt(buf, at);
      } catch {
        return true;
      }
      return byBytes(buf, start, start + buf.readInt16BE(start - 2));
    };
  }
  return (buf, at) => {
    let start: number;
    try {
      start = recordPropertiesAt(buf, at);
    } catch {
      return true;
    }
    const len = buf.readInt16BE(start - 2);
    const size = buf.readInt32BE(at);
    const record = at === 0 && buf.length === size ? buf : buf.subarray(at, at + size);
    return byString(record, len > 0 ? buf.toString('utf8', start, start + len) : '');
  };
}
