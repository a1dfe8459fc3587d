// A file layer for the store's I/O seam (setStoreFs) that models the page cache and the disk under it: every write
// to a file under `root` goes to the real file (the "page cache", what the running process reads back), and is also
// remembered as an undo record until an fsync/fdatasync of that file makes it durable. At the seeded crash point
// the power fails: every byte not yet synced is put back as it was on the "disk" (undo records applied newest
// first), the last write is torn at a random byte, files created and never synced vanish or come back empty, and
// `onCrash` is called (a child process reports and SIGKILLs itself there, so nothing runs after the power loss).
//
// Modelled as durable at once: directory operations (mkdir, rm) and writeFile (the abort file) — metadata is
// journaled; data is what this layer is about. Self-contained (node:fs only): a child process loads it as plain JS.
import nodeFs from 'node:fs';
import path from 'node:path';

type Fs = typeof nodeFs;
type Cb = (err: NodeJS.ErrnoException | null, ...rest: never[]) => void;

export interface PowerLossOptions {
  /** Only files under this directory are tracked (the store root). */
  root: string;
  seed: number;
  /** The power fails during the N-th mutating operation (write, truncate or sync) on a tracked file. */
  crashAtOp: number;
  /**
   * After the crash: 'drop' loses every unsynced write; 'writeback' keeps a random half of them, in any order (the
   * kernel had written some dirty pages back). Either way the last write is torn. Default: chosen by the seed.
   */
  mode?: 'drop' | 'writeback';
  onCrash: (report: PowerLossReport) => void;
}

export interface PowerLossReport {
  seed: number;
  crashAtOp: number;
  mode: 'drop' | 'writeback';
  /** Op index of the last sync after which no commit-log file held an unsynced write: every commit-log write before
   * it is durable. */
  lastCommitLogSyncOp: number;
  unsyncedWritesDropped: number;
  unsyncedWritesKept: number;
  tornFile: string | null;
  tornKeptBytes: number;
  tornOfBytes: number;
  vanishedFiles: string[];
}

interface Undo {
  /** Where the old bytes go back, and the file size before the operation. */
  pos: number;
  old: Buffer | null;
  oldSize: number;
  /** What a write wrote (null for a truncate): re-applied when the kernel had written it back. */
  bytes: Buffer | null;
}

interface FileState {
  undo: Undo[];
  /** Created by this run and never synced: its directory entry may not survive either. */
  createdUnsynced: boolean;
  /** The op count when it was created. */
  createdAtOp: number;
}

/** Deterministic generator (same as the tests' rng). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

function eio(): NodeJS.ErrnoException {
  const err: NodeJS.ErrnoException = new Error('EIO: i/o error (the power is off)');
  err.code = 'EIO';
  return err;
}

export interface PowerLossFs {
  fs: Fs;
  /** Mutating operations seen so far on tracked files (an ack taken now is covered by syncs with a larger index). */
  readonly ops: number;
  readonly crashed: boolean;
}

export function createPowerLossFs(opts: PowerLossOptions): PowerLossFs {
  const root = path.resolve(opts.root) + path.sep;
  const random = rng(opts.seed);
  const mode = opts.mode ?? (random() < 0.5 ? 'drop' : 'writeback');
  const fdPath = new Map<number, string>();
  const files = new Map<string, FileState>();
  let ops = 0;
  let crashed = false;
  let lastCommitLogSyncOp = 0;
  const commitLogDir = `${path.sep}commitlog${path.sep}`;
  /** A sync commits the file system's journal: every file created before it keeps its directory entry. */
  let lastAnySyncOp = 0;
  let lastWrite: { file: string; pos: number; bytes: Buffer } | null = null;

  const tracked = (p: unknown): string | undefined => {
    if (typeof p !== 'string') return undefined;
    const abs = path.resolve(p);
    return abs.startsWith(root) ? abs : undefined;
  };
  const stateOf = (file: string): FileState => {
    let st = files.get(file);
    if (!st) {
      st = { undo: [], createdUnsynced: false, createdAtOp: ops };
      files.set(file, st);
    }
    return st;
  };

  /** Counts a mutating op; the power fails inside the crashAtOp-th one, before it takes effect. */
  const step = (): void => {
    if (crashed) throw eio();
    ops++;
    if (ops >= opts.crashAtOp) {
      powerLoss();
      throw eio();
    }
  };

  /** Remembers what [pos, pos+len) held (and the size) before a write to it. */
  const recordWrite = (fd: number, file: string, pos: number, bufs: readonly NodeJS.ArrayBufferView[]): void => {
    let len = 0;
    for (const b of bufs) len += b.byteLength;
    const st = stateOf(file);
    const size = nodeFs.fstatSync(fd).size;
    const old = Buffer.alloc(len);
    if (pos < size) nodeFs.readSync(fd, old, 0, Math.min(len, size - pos), pos);
    const bytes = Buffer.allocUnsafe(len);
    let at = 0;
    for (const b of bufs) at += Buffer.from(b.buffer, b.byteOffset, b.byteLength).copy(bytes, at);
    st.undo.push({ pos, old, oldSize: size, bytes });
    lastWrite = { file, pos, bytes };
  };

  const recordTruncate = (fd: number, file: string, len: number): void => {
    const st = stateOf(file);
    const size = nodeFs.fstatSync(fd).size;
    let old: Buffer | null = null;
    if (len < size) {
      old = Buffer.alloc(size - len);
      nodeFs.readSync(fd, old, 0, old.length, len);
    }
    st.undo.push({ pos: len, old, oldSize: size, bytes: null });
  };

  const synced = (file: string): void => {
    const st = stateOf(file);
    st.undo = [];
    st.createdUnsynced = false;
    // The commit log is durable up to here only when no file of it holds an unsynced write (a flush syncs its files
    // one by one; power failing between two of them leaves the flush incomplete).
    if (file.includes(commitLogDir) && ![...files].some(([f, st]) => f.includes(commitLogDir) && st.undo.length > 0)) {
      lastCommitLogSyncOp = ops;
    }
    lastAnySyncOp = ops;
    if (lastWrite?.file === file) lastWrite = null;
  };

  function powerLoss(): void {
    crashed = true;
    let dropped = 0;
    let kept = 0;
    const torn = lastWrite;
    const vanished: string[] = [];
    // The journal keeps metadata in order: files created after the last sync vanish from some point on.
    const vanishFrom = lastAnySyncOp + Math.floor(random() * (ops - lastAnySyncOp + 2));
    for (const [file, st] of files) {
      if (!nodeFs.existsSync(file)) continue;
      if (st.createdUnsynced && st.createdAtOp >= vanishFrom) {
        nodeFs.rmSync(file, { force: true });
        vanished.push(path.relative(root, file));
        continue;
      }
      if (st.undo.length === 0) continue;
      const fd = nodeFs.openSync(file, 'r+');
      try {
        // Back to the disk's content: undo newest first, so overlapping writes end with the oldest bytes.
        for (let i = st.undo.length - 1; i >= 0; i--) {
          const u = st.undo[i]!;
          if (u.old) nodeFs.writeSync(fd, u.old, 0, u.old.length, u.pos);
          if (nodeFs.fstatSync(fd).size !== u.oldSize) nodeFs.ftruncateSync(fd, u.oldSize);
        }
        // Writeback: some writes had reached the disk anyway, in any order; each kept one lands whole, oldest first
        // (so a kept newer write wins where it overlaps a kept older one).
        for (const u of st.undo) {
          if (!u.bytes || u.bytes === torn?.bytes) continue;
          if (mode === 'writeback' && random() < 0.5) {
            kept++;
            nodeFs.writeSync(fd, u.bytes, 0, u.bytes.length, u.pos);
          } else {
            dropped++;
          }
        }
      } finally {
        nodeFs.closeSync(fd);
      }
    }
    // The write in flight tears: a random prefix of it reached the disk.
    let tornKept = 0;
    if (torn && nodeFs.existsSync(torn.file)) {
      tornKept = Math.floor(random() * (torn.bytes.length + 1));
      if (tornKept > 0) {
        const fd = nodeFs.openSync(torn.file, 'r+');
        try {
          nodeFs.writeSync(fd, torn.bytes, 0, tornKept, torn.pos);
        } finally {
          nodeFs.closeSync(fd);
        }
      }
    }
    for (const fd of fdPath.keys()) {
      try {
        nodeFs.closeSync(fd);
      } catch {
        // already closed
      }
    }
    fdPath.clear();
    opts.onCrash({
      seed: opts.seed, crashAtOp: opts.crashAtOp, mode, lastCommitLogSyncOp, unsyncedWritesDropped: dropped,
      unsyncedWritesKept: kept, tornFile: torn ? path.relative(root, torn.file) : null, tornKeptBytes: tornKept,
      tornOfBytes: torn?.bytes.length ?? 0, vanishedFiles: vanished,
    });
  }

  const later = (cb: Cb, err: NodeJS.ErrnoException | null, value?: unknown): void => {
    setImmediate(() => (cb as (e: NodeJS.ErrnoException | null, v?: unknown) => void)(err, value));
  };

  const openTracked = (p: nodeFs.PathLike, flags: nodeFs.OpenMode | undefined, mode?: nodeFs.Mode): number => {
    if (crashed) throw eio();
    const file = tracked(p);
    const existed = file ? nodeFs.existsSync(file) : true;
    const fd = nodeFs.openSync(p, flags ?? 'r', mode);
    if (file) {
      fdPath.set(fd, file);
      if (!existed) {
        files.delete(file);
        stateOf(file).createdUnsynced = true;
      }
    }
    return fd;
  };

  const writevTracked = (fd: number, bufs: NodeJS.ArrayBufferView[], pos: number): number => {
    const file = fdPath.get(fd);
    if (file) {
      step();
      recordWrite(fd, file, pos, bufs);
    }
    return nodeFs.writevSync(fd, bufs, pos);
  };

  const truncateTracked = (fd: number, len: number): void => {
    const file = fdPath.get(fd);
    if (file) {
      step();
      recordTruncate(fd, file, len);
    }
    nodeFs.ftruncateSync(fd, len);
  };

  const syncTracked = (fd: number): void => {
    const file = fdPath.get(fd);
    if (!file) return;
    step();
    synced(file); // the model is the disk: a sync makes the bytes durable, no real fsync needed
  };

  const wrapped: Partial<Fs> = {
    openSync: ((p: nodeFs.PathLike, flags?: nodeFs.OpenMode, mode?: nodeFs.Mode) => openTracked(p, flags, mode)) as Fs['openSync'],
    open: ((p: nodeFs.PathLike, flags: nodeFs.OpenMode, mode: nodeFs.Mode | Cb, cb?: Cb) => {
      const callback = (typeof mode === 'function' ? mode : cb)!;
      try {
        later(callback, null, openTracked(p, flags, typeof mode === 'function' ? undefined : mode));
      } catch (err) {
        later(callback, err as NodeJS.ErrnoException);
      }
    }) as unknown as Fs['open'],
    closeSync: ((fd: number) => {
      fdPath.delete(fd);
      nodeFs.closeSync(fd);
    }) as Fs['closeSync'],
    close: ((fd: number, cb?: Cb) => {
      fdPath.delete(fd);
      nodeFs.close(fd, cb ?? (() => undefined));
    }) as Fs['close'],
    writevSync: ((fd: number, bufs: NodeJS.ArrayBufferView[], pos?: number | null) => writevTracked(fd, bufs, pos ?? 0)) as Fs['writevSync'],
    // Async writes run synchronously here: no thread-pool write may land after the power is gone.
    writev: ((fd: number, bufs: NodeJS.ArrayBufferView[], pos: number | Cb, cb?: Cb) => {
      const callback = (typeof pos === 'function' ? pos : cb)!;
      try {
        later(callback, null, writevTracked(fd, bufs, typeof pos === 'number' ? pos : 0));
      } catch (err) {
        later(callback, err as NodeJS.ErrnoException);
      }
    }) as unknown as Fs['writev'],
    writeSync: ((fd: number, buf: NodeJS.ArrayBufferView, offset?: number, length?: number, position?: number) => {
      const view = Buffer.from(buf.buffer, buf.byteOffset + (offset ?? 0), length ?? buf.byteLength - (offset ?? 0));
      return writevTracked(fd, [view], position ?? 0);
    }) as Fs['writeSync'],
    ftruncateSync: ((fd: number, len?: number) => truncateTracked(fd, len ?? 0)) as Fs['ftruncateSync'],
    ftruncate: ((fd: number, len: number | Cb, cb?: Cb) => {
      const callback = (typeof len === 'function' ? len : cb)!;
      try {
        truncateTracked(fd, typeof len === 'number' ? len : 0);
        later(callback, null);
      } catch (err) {
        later(callback, err as NodeJS.ErrnoException);
      }
    }) as unknown as Fs['ftruncate'],
    fdatasync: ((fd: number, cb: Cb) => {
      try {
        syncTracked(fd);
        later(cb, null);
      } catch (err) {
        later(cb, err as NodeJS.ErrnoException);
      }
    }) as Fs['fdatasync'],
    fsync: ((fd: number, cb: Cb) => {
      try {
        syncTracked(fd);
        later(cb, null);
      } catch (err) {
        later(cb, err as NodeJS.ErrnoException);
      }
    }) as Fs['fsync'],
    fdatasyncSync: ((fd: number) => syncTracked(fd)) as Fs['fdatasyncSync'],
    fsyncSync: ((fd: number) => syncTracked(fd)) as Fs['fsyncSync'],
    rmSync: ((p: nodeFs.PathLike, o?: nodeFs.RmOptions) => {
      if (crashed) throw eio();
      const file = tracked(p);
      if (file) for (const f of [...files.keys()]) if (f === file || f.startsWith(file + path.sep)) files.delete(f);
      nodeFs.rmSync(p, o);
    }) as Fs['rmSync'],
  };
  const promises = {
    ...nodeFs.promises,
    rm: async (p: nodeFs.PathLike, o?: nodeFs.RmOptions) => {
      (wrapped.rmSync as Fs['rmSync'])(p, o);
    },
  };
  const fs = { ...nodeFs, ...wrapped, promises } as Fs;
  return {
    fs,
    get ops() {
      return ops;
    },
    get crashed() {
      return crashed;
    },
  };
}
