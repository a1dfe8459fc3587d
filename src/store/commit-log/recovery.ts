// Start-up side of the commit log: loading segment files and reading records sequentially (synchronous I/O;
// allowed at start-up only). Java counterparts: MappedFileQueue.load, CommitLog.recoverNormally and
// CommitLog.checkMessageAndReturnSize.
import path from 'node:path';
import {
  BLANK_MAGIC_CODE, checkRecord, MESSAGE_MAGIC_CODE_V1, MESSAGE_MAGIC_CODE_V2, readInt64, RECORD_OVERHEAD_V1_IPV4, RecordPos,
  storeTimestampPos,
} from '../record.js';
import type { DecodedRecord } from '../record.js';
import type { Logger } from 'pino';
import { fs, isOffsetFileName, readFullySync } from '../io.js';
import { Segment } from '../segment.js';

/** Opens every commit-log file in `dir`, oldest first. Throws if names are not contiguous offsets. */
export function loadSegmentsSync(dir: string, segmentSize: number): Segment[] {
  fs.mkdirSync(dir, { recursive: true });
  const names = fs.readdirSync(dir).filter(isOffsetFileName).sort();
  const segments: Segment[] = [];
  for (const name of names) {
    const from = Number(name);
    if (from % segmentSize !== 0) {
      throw new Error(`commit log file ${name} is not aligned to mappedFileSizeCommitLog=${segmentSize}`);
    }
    const prev = segments[segments.length - 1];
    if (prev && prev.endOffset !== from) throw new Error(`commit log files are not contiguous at ${name}`);
    const filePath = path.join(dir, name);
    const size = fs.statSync(filePath).size;
    // Java refuses a file of the wrong size. A short file (crash while creating it, or cut by hand) is
    // extended with zeros instead: the scan then ends the log where its data ends.
    if (size > segmentSize) {
      for (const s of segments) s.closeSync();
      throw new Error(`commit log file ${name} has size ${size}, expected ${segmentSize}`);
    }
    segments.push(Segment.openSync(filePath, from, segmentSize));
  }
  return segments;
}

/** Whether the segment holds no data at all (first 8 bytes zero): e.g. a preallocated next file. */
export function isSegmentEmptySync(seg: Segment): boolean {
  const b = Buffer.alloc(8);
  readFullySync(seg.fd, b, 0, 8, 0);
  return b.readUInt32BE(0) === 0 && b.readUInt32BE(4) === 0;
}

export type ScanItem =
  | { kind: 'record'; offset: number; record: DecodedRecord; raw: Buffer }
  /** Zeroes where a record would start: the clean end of the data. */
  | { kind: 'end'; offset: number }
  /** Bytes that are not a valid record (torn or corrupt). */
  | { kind: 'invalid'; offset: number }
  /** Past the last segment (the last file ended with BLANK). */
  | { kind: 'eof'; offset: number };

const SCAN_CHUNK_BYTES = 4 * 1024 * 1024;

/** Sequential record reader over the segments, in chunks; BLANK rolls to the next segment. */
export class LogReader {
  private segIdx: number;
  private pos: number;
  private win: Buffer;
  /** File position of win[0] and number of valid bytes in win, for segment segIdx. */
  private winPos = 0;
  private winLen = 0;

  constructor(
    private readonly segments: readonly Segment[],
    startOffset: number,
    /** BODYCRC is verified for records at or after this offset (Infinity: never). */
    public crcFromOffset: number,
    chunkBytes = SCAN_CHUNK_BYTES,
  ) {
    this.win = Buffer.allocUnsafe(chunkBytes);
    const first = segments[0];
    if (!first || startOffset >= segments[segments.length - 1]!.endOffset) {
      this.segIdx = segments.length;
      this.pos = 0;
      return;
    }
    const from = Math.max(startOffset, first.fromOffset);
    this.segIdx = Math.floor((from - first.fromOffset) / first.sizeBytes);
    this.pos = from - segments[this.segIdx]!.fromOffset;
  }

  /** Commit-log offset of the next byte to read. */
  get offset(): number {
    const seg = this.segments[this.segIdx];
    if (seg) return seg.fromOffset + this.pos;
    const last = this.segments[this.segments.length - 1];
    return last ? last.endOffset : 0;
  }

  /** Abandons the current segment (used by re-dispatch to step over a corrupt record). */
  skipSegment(): void {
    this.segIdx++;
    this.pos = 0;
    this.winLen = 0;
  }

  next(): ScanItem {
    for (;;) {
      const seg = this.segments[this.segIdx];
      if (!seg) return { kind: 'eof', offset: this.offset };
      const remaining = seg.sizeBytes - this.pos;
      if (remaining < 8) {
        // Java always leaves room for a BLANK marker; a tail shorter than that is treated as end of file.
        this.skipSegment();
        continue;
      }
      const h = this.ensure(seg, 8);
      const totalSize = this.win.readInt32BE(h);
      const magic = this.win.readUInt32BE(h + 4);
      if (magic === BLANK_MAGIC_CODE) {
        this.skipSegment();
        continue;
      }
      const offset = seg.fromOffset + this.pos;
      if (totalSize === 0 && magic === 0) return { kind: 'end', offset };
      if (
        (magic !== MESSAGE_MAGIC_CODE_V1 && magic !== MESSAGE_MAGIC_CODE_V2) ||
        totalSize < RECORD_OVERHEAD_V1_IPV4 ||
        totalSize > remaining
      ) {
        return { kind: 'invalid', offset };
      }
      const s = this.ensure(seg, totalSize);
      const raw = this.win.subarray(s, s + totalSize);
      const record = checkRecord(raw, 0, offset >= this.crcFromOffset);
      // PHYSICALOFFSET always holds the record's own offset: anything else is stale or foreign bytes.
      if (!record || record.commitLogOffset !== offset) return { kind: 'invalid', offset };
      this.pos += totalSize;
      return { kind: 'record', offset, record, raw };
    }
  }

  /** Makes [pos, pos+n) of the current segment available in `win`; returns its index in `win`. */
  private ensure(seg: Segment, n: number): number {
    if (this.pos >= this.winPos && this.pos + n <= this.winPos + this.winLen) return this.pos - this.winPos;
    const want = Math.min(Math.max(this.win.length, n), seg.sizeBytes - this.pos);
    if (want > this.win.length) this.win = Buffer.allocUnsafe(want);
    // Views handed out earlier point into the old window; never overwrite it in place.
    else this.win = Buffer.allocUnsafe(this.win.length);
    const got = readFullySync(seg.fd, this.win, 0, want, this.pos);
    if (got < want) this.win.fill(0, got, want);
    this.winPos = this.pos;
    this.winLen = want;
    return 0;
  }
}

/** Offset where a clean-restart scan begins: the start of the last `fileNum` files holding data (0: all). */
export function recoveryWindowStart(segments: readonly Segment[], fileNum: number): number {
  let last = segments.length - 1;
  while (last > 0 && isSegmentEmptySync(segments[last]!)) last--;
  const first = fileNum > 0 ? Math.max(0, last - fileNum + 1) : 0;
  return segments[first]?.fromOffset ?? 0;
}

/**
 * CommitLog.recoverAbnormally's start: the newest file whose first record was stored at or before
 * `minTimestamp` (checkpoint min(physic, logics) − 3 s); file 0 if none qualifies.
 */
export function abnormalWindowStart(segments: readonly Segment[], minTimestamp: number): number {
  const head = Buffer.alloc(RECORD_OVERHEAD_V1_IPV4);
  for (let i = segments.length - 1; i >= 0; i--) {
    const seg = segments[i]!;
    if (readFullySync(seg.fd, head, 0, head.length, 0) < head.length) continue;
    const magic = head.readUInt32BE(4);
    if (magic !== MESSAGE_MAGIC_CODE_V1 && magic !== MESSAGE_MAGIC_CODE_V2) continue;
    const storeTimestamp = readInt64(head, storeTimestampPos(head.readInt32BE(RecordPos.SYS_FLAG)));
    if (storeTimestamp !== 0 && storeTimestamp <= minTimestamp) return seg.fromOffset;
  }
  return segments[0]?.fromOffset ?? 0;
}

/** Re-dispatch yields this often so consume-queue writes keep up (bounds memory while rebuilding). */
const PAUSE_EVERY_RECORDS = 4096;

export interface RecoverOptions {
  /** Where reading starts (<= windowStart). */
  scanStart: number;
  /** From here on records are validated and the first invalid one ends the log. */
  windowStart: number;
  checkCrc: boolean;
  logger: Logger;
  onRecord: (record: DecodedRecord, offset: number) => void;
  pause: () => Promise<void>;
}

/**
 * Whether the last record before the end of the data looks cut by a torn write. A crash mid-write leaves
 * zeros after the written prefix; magic, lengths and BODYCRC catch a cut in the header or body, but nothing
 * covers the topic and properties. Neither ever ends in NUL (topics are validated; property strings end with
 * a separator or a value character), so a trailing NUL there means the record was not fully written.
 */
export function looksTorn(record: DecodedRecord): boolean {
  const props = record.propertiesString;
  if (props.length > 0) return props.charCodeAt(props.length - 1) === 0;
  return record.topic.length === 0 || record.topic.charCodeAt(record.topic.length - 1) === 0;
}

/**
 * CommitLog.recoverNormally / recoverAbnormally: reads records from `scanStart`, giving each to `onRecord`.
 * Inside the window the first invalid record (bad magic, size, offset or CRC: a torn write) ends the log, and
 * so does a last record that looksTorn. Before the window a damaged file is skipped instead — it is old,
 * acknowledged data whose consume-queue entries are being rebuilt.
 */
export async function recoverLog(
  segments: readonly Segment[], o: RecoverOptions,
): Promise<{ processOffset: number; lastStoreTimestamp: number }> {
  const minOffset = segments[0]?.fromOffset ?? 0;
  const start = Math.min(o.scanStart, o.windowStart);
  const reader = new LogReader(segments, start, o.checkCrc ? o.windowStart : Infinity);
  let processOffset = Math.max(start, minOffset);
  let lastStoreTimestamp = 0;
  let seen = 0;
  // Each record is handed on only once the next item is known, so a torn last record is never dispatched.
  let held: { offset: number; record: DecodedRecord } | null = null;
  const progress = new RecoveryProgress(o.logger, start, segments);
  const release = async (): Promise<void> => {
    if (!held) return;
    processOffset = held.offset + held.record.totalSize;
    lastStoreTimestamp = held.record.storeTimestamp;
    o.onRecord(held.record, held.offset);
    held = null;
    if (++seen % PAUSE_EVERY_RECORDS === 0) {
      progress.report(processOffset, seen);
      await o.pause();
    }
  };
  for (;;) {
    const item = reader.next();
    if (item.kind === 'record') {
      await release();
      held = { offset: item.offset, record: item.record };
      continue;
    }
    if (item.kind !== 'eof' && item.offset < o.windowStart) {
      o.logger.warn({ offset: item.offset, kind: item.kind }, 'commit log: unreadable data before the recovery window, skipping the file');
      await release();
      reader.skipSegment();
      continue;
    }
    if (held && held.offset >= o.windowStart && looksTorn(held.record)) {
      o.logger.warn({ offset: held.offset }, 'commit log: last record was not completely written, truncating the log here');
      processOffset = held.offset;
      held = null;
      break;
    }
    await release();
    if (item.kind === 'invalid') o.logger.warn({ offset: item.offset }, 'commit log: invalid record, truncating the log here');
    processOffset = Math.max(item.offset, minOffset);
    break;
  }
  progress.done(processOffset, seen);
  return { processOffset, lastStoreTimestamp };
}

/** How often a long recovery logs its progress. */
const PROGRESS_INTERVAL_MS = 1000;

/**
 * Progress of a recovery scan (re-reading and re-dispatching, which also rebuilds consume queues and the index):
 * percent of the bytes to scan, rate, records, at most once a second; nothing for a scan that ends sooner.
 */
class RecoveryProgress {
  private readonly t0 = performance.now();
  private lastReport = this.t0;
  private readonly end: number;
  private reported = false;

  constructor(
    private readonly logger: Logger,
    private readonly start: number,
    segments: readonly Segment[],
  ) {
    const last = segments[segments.length - 1];
    this.end = last ? last.fromOffset + last.sizeBytes : start;
  }

  report(offset: number, records: number): void {
    const now = performance.now();
    if (now - this.lastReport < PROGRESS_INTERVAL_MS) return;
    this.lastReport = now;
    this.reported = true;
    const scanned = offset - this.start;
    const total = Math.max(1, this.end - this.start);
    this.logger.info(
      {
        percent: Math.min(100, Math.round((scanned * 1000) / total) / 10),
        scannedMiB: Math.round(scanned / 1048576),
        ofMiB: Math.round(total / 1048576),
        MiBps: Math.round(scanned / 1048576 / ((now - this.t0) / 1000)),
        records,
      },
      'recovering commit log (re-dispatching to consume queues and index)',
    );
  }

  done(offset: number, records: number): void {
    if (!this.reported) return;
    const secs = (performance.now() - this.t0) / 1000;
    this.logger.info({ scannedMiB: Math.round((offset - this.start) / 1048576), records, seconds: Math.round(secs * 10) / 10 }, 'commit log recovered');
  }
}

/** Zeroes the log from `offset` (torn tail) and deletes the files after it; returns the files kept. */
export function truncateSegmentsSync(segments: readonly Segment[], offset: number, logger: Logger): Segment[] {
  const keep: Segment[] = [];
  for (const seg of segments) {
    // Keep the first file even when empty so the log's minimum offset survives.
    if (seg.fromOffset < offset || keep.length === 0) {
      keep.push(seg);
      if (offset < seg.endOffset) seg.zeroFromSync(Math.max(0, offset - seg.fromOffset));
    } else {
      logger.info({ file: seg.filePath }, 'commit log: deleting file beyond the recovered end');
      seg.destroySync();
    }
  }
  return keep;
}
