// One fixed-size file named by the offset of its first byte (Java MappedFile): commit-log segments and
// consume-queue files.
import path from 'node:path';
import { fs, closeFile, closeOpeningFile, closeOpeningFileSync, ftruncate, openFile, offsetToFileName, RW, RW_CREATE } from './io.js';

export class Segment {
  /** Open descriptor, or -1 until `ready` resolves. */
  fd = -1;
  /** Resolves once the file exists at full size and `fd` is usable. */
  readonly ready: Promise<void>;
  private closed = false;
  /** Reads/fsyncs in flight on `fd` (Java MappedFile's reference count); a retired file waits for them. */
  private pins = 0;
  private unpinned: (() => void) | null = null;

  private constructor(
    readonly fromOffset: number,
    readonly sizeBytes: number,
    readonly filePath: string,
    init: (seg: Segment) => Promise<void> | void,
  ) {
    const r = init(this);
    this.ready = r instanceof Promise ? r : Promise.resolve();
    // A failure is reported to whoever awaits `ready`; never as an unhandled rejection.
    this.ready.catch(() => {});
  }

  get endOffset(): number {
    return this.fromOffset + this.sizeBytes;
  }

  /** Creates (or reuses) the file asynchronously, sized to the full segment (sparse). */
  static create(dir: string, fromOffset: number, sizeBytes: number): Segment {
    const filePath = path.join(dir, offsetToFileName(fromOffset));
    return new Segment(fromOffset, sizeBytes, filePath, async (seg) => {
      await fs.promises.mkdir(dir, { recursive: true });
      const fd = await openFile(filePath, RW_CREATE);
      try {
        await ftruncate(fd, sizeBytes);
      } catch (err) {
        await closeFile(fd).catch(() => {});
        throw err;
      }
      if (seg.closed) {
        await closeFile(fd).catch(() => {});
        return;
      }
      seg.fd = fd;
    });
  }

  /** Opens an existing file at start-up (synchronous). A short file is extended to the segment size. */
  static openSync(filePath: string, fromOffset: number, sizeBytes: number): Segment {
    return new Segment(fromOffset, sizeBytes, filePath, (seg) => {
      const fd = fs.openSync(filePath, RW);
      const actual = fs.fstatSync(fd).size;
      if (actual < sizeBytes) fs.ftruncateSync(fd, sizeBytes);
      seg.fd = fd;
    });
  }

  /** Zeroes everything from `position` to the end of the file (start-up only): shrink, then grow back. */
  zeroFromSync(position: number): void {
    fs.ftruncateSync(this.fd, position);
    fs.ftruncateSync(this.fd, this.sizeBytes);
  }

  /**
   * Runs `fn` with the open descriptor, keeping it open until `fn` settles; undefined if the file is closed.
   * Readers use this so a file deleted by clean-up is never closed (and its fd number reused) under them.
   */
  async withFd<T>(fn: (fd: number) => Promise<T>): Promise<T | undefined> {
    if (this.fd < 0) return undefined;
    this.pins++;
    try {
      return await fn(this.fd);
    } finally {
      if (--this.pins === 0 && this.unpinned) this.unpinned();
    }
  }

  /**
   * Closes and deletes the file once no read holds it, or after `forciblyMs` regardless (Java
   * MappedFile.destroy(intervalForcibly)). The caller has already removed it from its list.
   */
  async destroyWhenIdle(forciblyMs: number): Promise<void> {
    if (this.pins > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, forciblyMs);
        timer.unref();
        this.unpinned = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.unpinned = null;
    }
    await this.destroy();
  }

  async close(): Promise<void> {
    this.closed = true;
    await closeOpeningFile(this);
  }

  closeSync(): void {
    this.closed = true;
    closeOpeningFileSync(this);
  }

  async destroy(): Promise<void> {
    await this.close();
    await fs.promises.rm(this.filePath, { force: true });
  }

  destroySync(): void {
    this.closeSync();
    fs.rmSync(this.filePath, { force: true });
  }
}
