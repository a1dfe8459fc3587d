// `{root}/checkpoint` (Java StoreCheckpoint): one 4 KiB page of int64s — physicMsgTimestamp@0 (commit log
// flushed), logicsMsgTimestamp@8 (consume queues flushed), indexMsgTimestamp@16, masterFlushedOffset@24,
// confirmPhyOffset@32 (the last two 5.x only). And `{root}/abort`: present while the store runs.
import path from 'node:path';
import { fs, fdatasync, writevAll } from './io.js';
import { readInt64, writeInt64 } from './record.js';

export const CHECKPOINT_FILE_SIZE = 4096;

export class StoreCheckpoint {
  physicMsgTimestamp = 0;
  logicsMsgTimestamp = 0;
  indexMsgTimestamp = 0;
  masterFlushedOffset = 0;
  confirmPhyOffset = 0;
  /** Whether the file existed before this start. */
  readonly existed: boolean;
  private fd: number;
  private flushing: Promise<void> | null = null;

  constructor(readonly filePath: string) {
    fs.mkdirSync(path.dirname(filePath), { recursive: true });
    this.existed = fs.existsSync(filePath);
    this.fd = fs.openSync(filePath, fs.constants.O_RDWR | fs.constants.O_CREAT, 0o644);
    if (fs.fstatSync(this.fd).size < CHECKPOINT_FILE_SIZE) fs.ftruncateSync(this.fd, CHECKPOINT_FILE_SIZE);
    if (this.existed) {
      const b = Buffer.alloc(40);
      fs.readSync(this.fd, b, 0, 40, 0);
      this.physicMsgTimestamp = readInt64(b, 0);
      this.logicsMsgTimestamp = readInt64(b, 8);
      this.indexMsgTimestamp = readInt64(b, 16);
      this.masterFlushedOffset = readInt64(b, 24);
      this.confirmPhyOffset = readInt64(b, 32);
    }
  }

  /** Java getMinTimestamp: where an abnormal-stop recovery may start, 3 s of slack. */
  get minTimestamp(): number {
    return Math.max(0, Math.min(this.physicMsgTimestamp, this.logicsMsgTimestamp) - 3000);
  }

  private encode(): Buffer {
    const b = Buffer.alloc(40);
    writeInt64(b, 0, this.physicMsgTimestamp);
    writeInt64(b, 8, this.logicsMsgTimestamp);
    writeInt64(b, 16, this.indexMsgTimestamp);
    writeInt64(b, 24, this.masterFlushedOffset);
    writeInt64(b, 32, this.confirmPhyOffset);
    return b;
  }

  /** Writes and fdatasyncs the page (concurrent calls share a pass, then one more). */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing.then(() => this.flush());
    if (this.fd < 0) return Promise.resolve();
    const fd = this.fd;
    const p = (async () => {
      await writevAll(fd, [this.encode()], 0);
      await fdatasync(fd);
    })().finally(() => {
      this.flushing = null;
    });
    this.flushing = p;
    return p;
  }

  async close(): Promise<void> {
    await this.flush();
    if (this.fd >= 0) {
      fs.closeSync(this.fd);
      this.fd = -1;
    }
  }
}

/** `{root}/abort`: created at start (holding the pid, as HEAD), deleted on a clean shutdown. */
export class AbortFile {
  constructor(readonly filePath: string) {}

  /** Whether the previous run ended without a clean shutdown. */
  existsSync(): boolean {
    return fs.existsSync(this.filePath);
  }

  createSync(): void {
    fs.writeFileSync(this.filePath, String(process.pid));
  }

  deleteSync(): void {
    fs.rmSync(this.filePath, { force: true });
  }
}
