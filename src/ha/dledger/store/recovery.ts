// Recovery of the data and index files at start-up (protocol/dledger.md §4.7; D/store/file/DLedgerMmapFileStore
// .recover), rule for rule:
//   1. files consecutive (DISK_ERROR otherwise); no data file → empty log;
//   2. start at the third-last data file, walking back to one whose first entry checks out against its index unit;
//   3. scan forward: blank → next file, size 0 → end; each entry must sit at its own position, have
//      bodySize + 48 == size > 44, magic 1, index = previous + 1, term ≥ previous; the first entry whose index unit
//      disagrees cuts the index there and every unit from then on is rewritten from the data; the first failure
//      ends the scan;
//   4. a scan ending more than a file before the last data file is refused (the official node exits);
//   5. data cut at the scan end, index at (end + 1) × 32; the begin index is the first file's first entry.
// Ours does better in five ways, none changing what an official node would keep:
//   - what is cut off is zeroed (bounded: what a crash mid-append can leave, see DATA_ZERO_BOUND_BYTES), so a
//     later scan cannot take those bytes for entries;
//   - a file-end blank with no entry after it is cut as well;
//   - a first data file rebuilt mid-file (rebuildWithPos) is read from the position our checkpoint recorded,
//     where the official node finds no entry at the file start and truncates everything;
//   - the step-2 check requires magic 1 (Java's condition there admits any magic ≥ 1; its scan refuses them anyway);
//   - when the first file has no valid entry at its start but the scan began in a later file, the log begins at
//     the first entry scanned (Java reads whatever lies at the file start as the begin index, zeros → 0).
import type { Logger } from '../../../common/logger.js';
import { readInt64 } from '../../../store/record.js';
import { DLEDGER_ENTRY_HEADER_BYTES, DLedgerCode, DLedgerStoreError } from '../types.js';
import {
  DLEDGER_BLANK_MAGIC,
  DLEDGER_ENTRY_MAGIC,
  DLEDGER_HEADER_SIZE_FIELD_BYTES,
  DLEDGER_INDEX_UNIT_BYTES,
  DLEDGER_MAX_ENTRY_BYTES,
  DLEDGER_MIN_BLANK_BYTES,
  DLEDGER_POS_OFFSET,
  encodeIndexUnit,
  indexUnitMatches,
  readEntryHeader,
  readIndexUnit,
  type EntryHeader,
} from './entry-codec.js';
import type { DLedgerFileList } from './file-list.js';

const HEADER = DLEDGER_ENTRY_HEADER_BYTES;
const UNIT = DLEDGER_INDEX_UNIT_BYTES;
/** Bytes zeroed after a cut in recovery: one torn entry (header written last, so at most its body) and a blank. */
const DATA_ZERO_BOUND_BYTES = DLEDGER_MAX_ENTRY_BYTES + DLEDGER_MIN_BLANK_BYTES;
const INDEX_ZERO_BOUND_BYTES = 4096;
const WINDOW_BYTES = 1024 * 1024;

export interface RecoveredLog {
  beginIndex: number;
  /** Position of the begin entry (the data's min offset); −1 when the log is empty. */
  beginPos: number;
  endIndex: number;
  endTerm: number;
}

/** Sequential reads through a 1 MiB window (recovery reads every header and unit once). */
class WindowReader {
  buf = Buffer.allocUnsafe(WINDOW_BYTES);
  private from = 0;
  private len = 0;

  constructor(private readonly list: DLedgerFileList) {}

  /** Offset in `buf` of `n` bytes at `pos` (within one file), or −1 when the files do not hold them. */
  at(pos: number, n: number): number {
    if (pos < this.from || pos + n > this.from + this.len) {
      if (n > this.buf.length) this.buf = Buffer.allocUnsafe(n);
      this.from = pos;
      this.len = this.list.readRaw(pos, this.buf.length, this.buf);
      if (n > this.len) return -1;
    }
    return pos - this.from;
  }

  /** `n` bytes at `pos` as a view, or null. */
  read(pos: number, n: number): Buffer | null {
    const o = this.at(pos, n);
    return o < 0 ? null : this.buf.subarray(o, o + n);
  }

  invalidate(): void {
    this.len = 0;
  }
}

export function recoverLog(
  data: DLedgerFileList,
  index: DLedgerFileList,
  recordedMinOffset: number | null,
  log: Logger,
): RecoveredLog {
  if (!data.checkSelf()) throw new DLedgerStoreError(DLedgerCode.DISK_ERROR, `dledger data files in ${data.dir} are not consecutive`);
  if (!index.checkSelf()) throw new DLedgerStoreError(DLedgerCode.DISK_ERROR, `dledger index files in ${index.dir} are not consecutive`);
  const empty: RecoveredLog = { beginIndex: -1, beginPos: -1, endIndex: -1, endTerm: -1 };
  const files = data.files;
  if (files.length === 0) {
    index.truncateOffset(0, INDEX_ZERO_BOUND_BYTES);
    return empty;
  }
  const dataReader = new WindowReader(data);
  const indexReader = new WindowReader(index);
  const fileBytes = data.fileBytes;

  // The first entry of a file (or at a recorded position in the first file) with its index unit.
  const firstEntryAt = (pos: number): EntryHeader | null => {
    const b = dataReader.read(pos, HEADER);
    if (!b) return null;
    const h = readEntryHeader(b);
    if (h.magic !== DLEDGER_ENTRY_MAGIC || h.size <= DLEDGER_HEADER_SIZE_FIELD_BYTES || h.pos !== pos) return null;
    if (h.bodySize + HEADER !== h.size) return null;
    const u = indexReader.read(h.index * UNIT, UNIT);
    return u && indexUnitMatches(readIndexUnit(u), h, pos) ? h : null;
  };
  const recordedInFirst =
    recordedMinOffset !== null && recordedMinOffset > files[0]!.fromOffset && recordedMinOffset < files[0]!.fromOffset + fileBytes
      ? recordedMinOffset
      : null;

  let fileIdx = Math.max(0, files.length - 3);
  let scanPos = files[fileIdx]!.fromOffset;
  for (let i = fileIdx; i >= 0; i--) {
    fileIdx = i;
    scanPos = files[i]!.fromOffset;
    if (firstEntryAt(scanPos)) break;
    if (i === 0 && recordedInFirst !== null && firstEntryAt(recordedInFirst)) {
      scanPos = recordedInFirst;
      break;
    }
    log.warn({ file: files[i]!.filePath }, 'dledger recovery: first entry of the file does not check out');
  }
  if (fileIdx === 0 && scanPos !== files[0]!.fromOffset) files[0]!.startPosition = scanPos - files[0]!.fromOffset;
  log.info({ file: files[fileIdx]!.filePath, scanPos, files: files.length }, 'dledger recovery: scanning');

  let lastIndex = -1;
  let lastTerm = -1;
  let firstScanned: { index: number; pos: number } | null = null;
  let processOffset = scanPos;
  let lastEntryEnd = scanPos;
  let needWriteIndex = false;
  const stop = (why: string) => log.info({ pos: processOffset, lastIndex, why }, 'dledger recovery: data ends here');
  for (;;) {
    const file = data.fileAt(processOffset);
    if (!file) break;
    const rel = processOffset - file.fromOffset;
    const mo = rel + 4 <= fileBytes ? dataReader.at(processOffset, 4) : -1;
    if (mo >= 0 && dataReader.buf.readInt32BE(mo) === DLEDGER_BLANK_MAGIC) {
      processOffset = file.fromOffset + fileBytes;
      if (!data.fileAt(processOffset)) break;
      continue;
    }
    const o = rel + HEADER <= fileBytes ? dataReader.at(processOffset, HEADER) : -1;
    if (o < 0) {
      stop('no room for a header before the file end');
      break;
    }
    // Fields read in place (no per-entry objects: a 1 GiB file holds millions of entries).
    const b = dataReader.buf;
    const magic = b.readInt32BE(o);
    const size = b.readInt32BE(o + 4);
    if (size === 0) break;
    const entryIndex = readInt64(b, o + 8);
    const term = readInt64(b, o + 16);
    const pos = readInt64(b, o + DLEDGER_POS_OFFSET);
    const bodySize = b.readInt32BE(o + 44);
    let why: string | null = null;
    if (pos !== processOffset) why = `pos ${pos} != ${processOffset}`;
    else if (bodySize + HEADER !== size) why = `size ${size} != ${HEADER} + ${bodySize}`;
    else if (rel + size > fileBytes) why = `size ${size} runs past the file end`;
    else if (magic !== DLEDGER_ENTRY_MAGIC) why = `magic ${magic}`;
    else if (lastIndex !== -1 && entryIndex !== lastIndex + 1) why = `index ${entryIndex} after ${lastIndex}`;
    else if (term < lastTerm) why = `term ${term} after ${lastTerm}`;
    else if (size <= DLEDGER_HEADER_SIZE_FIELD_BYTES) why = `size ${size}`;
    if (why) {
      stop(why);
      break;
    }
    if (!needWriteIndex) {
      const u = indexReader.at(entryIndex * UNIT, UNIT);
      const ub = indexReader.buf;
      const matches =
        u >= 0 &&
        ub.readInt32BE(u) === magic &&
        readInt64(ub, u + 4) === processOffset &&
        ub.readInt32BE(u + 12) === size &&
        readInt64(ub, u + 16) === entryIndex &&
        readInt64(ub, u + 24) === term;
      if (!matches) {
        log.warn({ index: entryIndex, pos: processOffset }, 'dledger recovery: index unit disagrees with the data; rewriting the index from here');
        const cut = entryIndex * UNIT;
        index.truncateOffset(cut, cut + INDEX_ZERO_BOUND_BYTES);
        if (index.maxWrotePosition !== cut) index.rebuildWithPos(cut);
        indexReader.invalidate();
        needWriteIndex = true;
      }
    }
    if (needWriteIndex) {
      const at = index.appendPosition(UNIT, false, entryIndex * UNIT);
      if (at !== entryIndex * UNIT) {
        stop(`index file position ${at} != ${entryIndex * UNIT}`);
        break;
      }
      const { file: ifile, rel: irel } = index.prepareAppend(UNIT, false, at);
      index.writeAt(ifile, irel, encodeIndexUnit({ magic, pos: processOffset, size, index: entryIndex, term }), 0, UNIT);
      ifile.wrotePosition += UNIT;
    }
    firstScanned ??= { index: entryIndex, pos: processOffset };
    lastIndex = entryIndex;
    lastTerm = term;
    processOffset += size;
    lastEntryEnd = processOffset;
  }

  const lastFile = files[files.length - 1]!;
  if (lastFile.fromOffset - processOffset > fileBytes) {
    throw new DLedgerStoreError(
      DLedgerCode.DISK_ERROR,
      `dledger recovery stopped at ${processOffset}, more than one file before the last data file ${lastFile.filePath}; ` +
        'check the files manually before anything is truncated',
    );
  }
  // Ours: a file-end blank after the last entry is cut too (a crash between writing it and the entry it was for):
  // kept, it would put the next entry into the next file even when that entry fits, away from the leader's layout.
  const dataEnd = lastIndex >= 0 ? lastEntryEnd : processOffset;
  data.truncateOffset(dataEnd, dataEnd + DATA_ZERO_BOUND_BYTES);
  const indexEnd = (lastIndex + 1) * UNIT;
  index.truncateOffset(indexEnd, indexEnd + INDEX_ZERO_BOUND_BYTES);
  if (lastIndex === -1) return empty;

  // The begin entry: the first file's first entry (at its start position), else the first one scanned.
  dataReader.invalidate();
  indexReader.invalidate();
  let minPos = data.minOffset;
  let first = firstEntryAt(minPos);
  if (!first && recordedInFirst !== null && data.first === files[0] && recordedInFirst < processOffset) {
    first = firstEntryAt(recordedInFirst);
    if (first) {
      files[0]!.startPosition = recordedInFirst - files[0]!.fromOffset;
      minPos = recordedInFirst;
    }
  }
  if (first) return { beginIndex: first.index, beginPos: minPos, endIndex: lastIndex, endTerm: lastTerm };
  log.error(
    { file: files[0]!.filePath, beginIndex: firstScanned!.index },
    'dledger recovery: the first data file starts with no valid entry; the log begins where the scan began',
  );
  return { beginIndex: firstScanned!.index, beginPos: firstScanned!.pos, endIndex: lastIndex, endTerm: lastTerm };
}
