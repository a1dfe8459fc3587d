// The classic commit log a broker had before DLedger mode (protocol/dledger.md §5.4; Java DLedgerCommitLog
// setRecoverPosition): kept for reads below dividedCommitlogOffset, sealed once with a classic BLANK at its written
// end so the DLedger files continue the physical offsets at the next file start.
import type { Logger } from 'pino';
import { BLANK_MAGIC_CODE, type CommitLogFile, END_FILE_MIN_BLANK_LENGTH, storeFs as fs } from '../../store/index.js';

/** Whether a file holds anything (its first 8 bytes are not zero): a preallocated next file does not. */
function holdsData(file: CommitLogFile): boolean {
  const fd = fs.openSync(file.filePath, 'r');
  try {
    const head = Buffer.alloc(8);
    const n = fs.readSync(fd, head, 0, 8, 0);
    return n === 8 && (head.readUInt32BE(0) !== 0 || head.readUInt32BE(4) !== 0);
  } finally {
    fs.closeSync(fd);
  }
}

/** The end of the last classic file holding data, or −1 when none does (read at start, before any recovery). */
export function classicDataEnd(files: readonly CommitLogFile[]): number {
  for (let i = files.length - 1; i >= 0; i--) if (holdsData(files[i]!)) return files[i]!.endOffset;
  return -1;
}

/**
 * Ends the classic log at its recovered written end `writtenEnd`: a BLANK record (total size = bytes left, magic
 * 0xCBD43194) unless the end is a file boundary already, fsynced. Returns the offset the DLedger data continues at
 * (the end of that file).
 */
export function sealClassicLog(files: readonly CommitLogFile[], writtenEnd: number, fileSizeBytes: number, logger: Logger): number {
  const within = writtenEnd % fileSizeBytes;
  if (within === 0) return writtenEnd;
  const fileStart = writtenEnd - within;
  const file = files.find((f) => f.fromOffset === fileStart);
  if (!file) throw new Error(`the classic commit log ends at ${writtenEnd} but has no file at ${fileStart}`);
  const left = fileSizeBytes - within;
  if (left >= END_FILE_MIN_BLANK_LENGTH) {
    const fd = fs.openSync(file.filePath, 'r+');
    try {
      const head = Buffer.alloc(8);
      fs.readSync(fd, head, 0, 8, within);
      if (head.readUInt32BE(4) !== BLANK_MAGIC_CODE) {
        head.writeInt32BE(left, 0);
        head.writeUInt32BE(BLANK_MAGIC_CODE, 4);
        fs.writeSync(fd, head, 0, 8, within);
        fs.fdatasyncSync(fd);
      }
    } finally {
      fs.closeSync(fd);
    }
  }
  logger.info({ writtenEnd, dividedCommitlogOffset: fileStart + fileSizeBytes, file: file.filePath },
    'DLedger commit log: the classic commit log is sealed; DLedger data continues at the next file');
  return fileStart + fileSizeBytes;
}
