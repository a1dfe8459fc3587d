// One way to persist a table (topics, subscription groups, consumer offsets, delay offsets, timer progress, the
// nameserver's KV config), as Java's ConfigManager / MixAll.string2File do: write `<file>.tmp`, fsync, keep the
// old file as `<file>.bak`, rename. Loading falls back to the .bak when the file is missing, empty or unreadable.
// Saves run off the event loop one at a time; changes made during a save are folded into one more. Shutdown waits
// for the running save and then writes synchronously.
import fs from 'node:fs';
import path from 'node:path';
import { parseFastjson } from './fastjson.js';
import type { Logger } from './logger.js';

export type TableLoad<T> =
  | { status: 'missing' }
  | { status: 'loaded'; value: T; fromBackup: boolean }
  /** The file exists but neither it nor its .bak can be read back. */
  | { status: 'unreadable'; reason: string };

/** Reads `file` (else `file.bak`) with `parse`; an empty file counts as missing. */
export function readTableFile<T>(file: string, parse: (text: string) => T): TableLoad<T> {
  let reason: string | undefined;
  for (const candidate of [file, `${file}.bak`]) {
    let text: string;
    try {
      text = fs.readFileSync(candidate, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') reason ??= `cannot read ${candidate}: ${(err as Error).message}`;
      continue;
    }
    if (text.trim() === '') continue;
    try {
      return { status: 'loaded', value: parse(text), fromBackup: candidate !== file };
    } catch (err) {
      reason ??= `${candidate} cannot be parsed: ${(err as Error).message}`;
    }
  }
  return reason === undefined ? { status: 'missing' } : { status: 'unreadable', reason };
}

export class TableFile {
  private dirty = false;
  private running: Promise<void> | null = null;
  /** The save that starts after the running one (changes made while it runs). */
  private queued: Promise<void> | null = null;
  private timer: NodeJS.Timeout | undefined;

  /**
   * @param encode the table's text (or bytes) now; called when a save starts, so a save holds a whole version.
   * @param what the table's name in log lines.
   */
  constructor(
    readonly file: string,
    private readonly encode: () => string | Uint8Array,
    private readonly logger: Logger,
    private readonly what: string,
  ) {}

  /** The parsed table (fastjson, as Java writes it); undefined when missing or unreadable (logged). */
  load(): unknown | undefined {
    const res = this.loadStrict(parseFastjson);
    if (res.status === 'unreadable') {
      this.logger.warn({ file: this.file, reason: res.reason }, `${this.what}: unreadable, starting empty`);
      return undefined;
    }
    return res.status === 'loaded' ? res.value : undefined;
  }

  /** The table with the outcome spelled out, for callers that must not start over an unreadable file. */
  loadStrict<T>(parse: (text: string) => T): TableLoad<T> {
    const res = readTableFile(this.file, parse);
    if (res.status === 'loaded' && res.fromBackup) this.logger.warn({ file: this.file }, `${this.what}: loaded from the .bak copy`);
    return res;
  }

  /** Marks the table changed; the next save writes it. */
  changed(): void {
    this.dirty = true;
  }

  /**
   * Writes the table if it changed. Resolves once every change made before the call is on disk; rejects if that
   * save failed (the table stays marked changed, so a later save tries again).
   */
  save(): Promise<void> {
    if (this.queued) return this.queued;
    if (this.running) {
      if (!this.dirty) return this.running;
      const queued = this.running
        .catch(() => undefined)
        .then(() => {
          this.queued = null;
          return this.startSave();
        });
      this.queued = queued;
      return queued;
    }
    return this.startSave();
  }

  /** changed() and save(), for callers that do not wait: a failure is logged. */
  request(): void {
    this.changed();
    this.save().catch(() => undefined);
  }

  /** Saves every `intervalMs` while changed (Java's periodic persist of offsets and delay offsets). */
  saveEvery(intervalMs: number): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = setInterval(() => void this.save().catch(() => undefined), intervalMs);
    this.timer.unref();
  }

  /** Resolves when no save is running or queued. */
  async idle(): Promise<void> {
    while (this.running || this.queued) await (this.queued ?? this.running)!.catch(() => undefined);
  }

  /** Synchronous write (start-up, and shutdown after idle()); a failure is logged and keeps the table changed. */
  saveSync(onlyIfChanged = false): void {
    if (onlyIfChanged && !this.dirty) return;
    this.dirty = false;
    try {
      saveFileAtomicSync(this.file, this.encode());
    } catch (err) {
      this.dirty = true;
      this.logger.error({ err, file: this.file }, `failed to persist ${this.what}`);
    }
  }

  /** Shutdown: stops the periodic save, waits for a save in flight, then writes synchronously. */
  async close(onlyIfChanged = false): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.idle();
    this.saveSync(onlyIfChanged);
  }

  private startSave(): Promise<void> {
    if (!this.dirty) return Promise.resolve();
    this.dirty = false;
    let content: string | Uint8Array;
    try {
      content = this.encode();
    } catch (err) {
      this.dirty = true;
      return Promise.reject(err as Error);
    }
    const run = saveFileAtomic(this.file, content).then(
      () => {
        this.running = null;
      },
      (err: unknown) => {
        this.running = null;
        this.dirty = true;
        this.logger.error({ err, file: this.file }, `failed to persist ${this.what}`);
        throw err;
      },
    );
    this.running = run;
    return run;
  }
}

/** temp file + fsync, the old file copied to `.bak`, rename: a crash leaves the old or the new version. */
async function saveFileAtomic(file: string, content: string | Uint8Array): Promise<void> {
  await fs.promises.mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp`;
  const fh = await fs.promises.open(tmp, 'w');
  try {
    await fh.writeFile(content);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await fs.promises.copyFile(file, `${file}.bak`).catch(() => undefined);
  await fs.promises.rename(tmp, file);
}

export function saveFileAtomicSync(file: string, content: string | Uint8Array): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp`;
  const fd = fs.openSync(tmp, 'w');
  try {
    fs.writeFileSync(fd, content);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  if (fs.existsSync(file)) fs.copyFileSync(file, `${file}.bak`);
  fs.renameSync(tmp, file);
}
