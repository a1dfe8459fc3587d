// Retention and the disk guard: Java DefaultMessageStore.CleanCommitLogService (expired or forced commit-log
// file deletion, the disk-full flag) and ConsumeQueueStore.CleanConsumeQueueService (consume-queue files below
// the new commit-log minimum, min offsets, index files).
import fs from 'node:fs';
import type { Logger } from 'pino';
import { parseDeleteWhen, type StoreConfig } from './config.js';
import type { CommitLogFile, CommitLogPort } from './commit-log/port.js';
import type { ConsumeQueueStore } from './consume-queue/store.js';

/** The fields of fs.statfs the disk guard uses. */
export interface StatFsLike {
  bsize: number;
  blocks: number;
  bfree: number;
  bavail: number;
}

/** What the store reads from its surroundings for clean-up; tests replace these. */
export interface StoreEnv {
  /** Wall clock, ms: file expiry and the deleteWhen hour (local time, as Java's Calendar). */
  now: () => number;
  /** File-system usage of the partition holding `dir`. */
  statfs: (dir: string) => Promise<StatFsLike>;
  /** Last-modified time of a file, ms (Java File.lastModified). */
  fileMtimeMs: (file: string) => Promise<number>;
}

export const DEFAULT_STORE_ENV: StoreEnv = Object.freeze({
  now: () => Date.now(),
  statfs: (dir: string) => fs.promises.statfs(dir),
  fileMtimeMs: async (file: string) => (await fs.promises.stat(file)).mtimeMs,
});

/** Disk checks between clean-up runs (ours: Java checks only every cleanResourceInterval). */
export const DISK_CHECK_INTERVAL_MS = 1000;
const HOUR_MS = 3600 * 1000;
/** Java MAX_MANUAL_DELETE_FILE_TIMES. */
const MANUAL_DELETE_RUNS = 20;

/**
 * UtilAll.getDiskPartitionSpaceUsedPercent: used / (used + available to us), rounded up to a whole percent,
 * as a fraction (0.91); -1 when unknown.
 */
export function diskUsedRatio(s: StatFsLike): number {
  const used = (s.blocks - s.bfree) * s.bsize;
  const entire = used + s.bavail * s.bsize;
  if (!(s.blocks > 0) || !(entire > 0)) return -1;
  return Math.ceil((used * 100) / entire) / 100;
}

function clamp(v: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, v));
}

export interface DiskUsage {
  /** Used fractions of the partitions holding the commit log, the consume queues and the store root; -1 unknown. */
  commitLog: number;
  consumeQueue: number;
  root: number;
}

export interface CleanupRun {
  commitLogFilesDeleted: number;
  consumeQueueFilesDeleted: number;
  minPhyOffset: number;
}

export interface StoreCleanerDeps {
  config: StoreConfig;
  logger: Logger;
  commitLog: CommitLogPort;
  cqStore: ConsumeQueueStore;
  env: StoreEnv;
  /** Called after the commit-log minimum advanced and the consume queues followed (index-file deletion). */
  onMinPhyOffsetAdvanced: (minPhyOffset: number) => void;
}

export class StoreCleaner {
  /** Java RunningFlags DISK_FULL: puts are refused while set. Set above the warning level, cleared below the forced-clean level. */
  diskFull = false;
  usage: DiskUsage = { commitLog: -1, consumeQueue: -1, root: -1 };
  /** Clock, statfs and mtime in use (replaceable while running, for tests). */
  env: StoreEnv;
  private cleanImmediately = false;
  private manualDeleteRuns = 0;
  private lastPhysicalMinOffset = 0;
  /** deleteWhen as hours, parsed again whenever the setting changes (mqadmin updateBrokerConfig). */
  private deleteHoursOf = { spec: '', hours: [] as number[] };
  private timers: NodeJS.Timeout[] = [];
  private running: Promise<CleanupRun> | null = null;
  private checking: Promise<boolean> | null = null;
  private stopped = false;

  constructor(private readonly d: StoreCleanerDeps) {
    this.env = d.env;
    this.deleteHours();
  }

  private deleteHours(): number[] {
    const spec = this.d.config.deleteWhen;
    if (spec !== this.deleteHoursOf.spec) this.deleteHoursOf = { spec, hours: parseDeleteWhen(spec) };
    return this.deleteHoursOf.hours;
  }

  // Thresholds as fractions, clamped as Java's getters do.
  get warningRatio(): number {
    return clamp(this.d.config.diskSpaceWarningLevelRatio / 100, 0.35, 0.9);
  }

  get cleanForciblyRatio(): number {
    return clamp(this.d.config.diskSpaceCleanForciblyRatio / 100, 0.3, 0.85);
  }

  get maxUsedRatio(): number {
    return clamp(this.d.config.diskMaxUsedSpaceRatio, 10, 95) / 100;
  }

  /** Checks the disk now and then on timers; clean-up runs every cleanResourceInterval. */
  async start(): Promise<void> {
    this.stopped = false;
    await this.checkDiskSpace();
    const disk = setInterval(() => void this.checkDiskSpace(), DISK_CHECK_INTERVAL_MS);
    const clean = setInterval(() => void this.runOnce(), this.d.config.cleanResourceInterval);
    disk.unref();
    clean.unref();
    this.timers.push(disk, clean);
  }

  /** Stops the timers and waits for a run in progress (before the store closes its files). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    await this.running?.catch(() => undefined);
    await this.checking?.catch(() => undefined);
  }

  /** Java executeDeleteFilesManually (admin DELETE_EXPIRED_COMMITLOG): the next 20 runs delete expired files. */
  executeDeleteFilesManually(): void {
    this.manualDeleteRuns = MANUAL_DELETE_RUNS;
    this.d.logger.info('executeDeleteFilesManually was invoked');
  }

  /** The send answer while the disk is full (Java SendMessageProcessor's SERVICE_NOT_AVAILABLE remark). */
  diskFullRemark(): string {
    const f = (r: number) => r.toFixed(2).padStart(5);
    const u = this.usage;
    return 'service not available now. It may be caused by one of the following reasons: the broker\'s disk is full ' +
      `[CL: ${f(u.commitLog)} CQ: ${f(u.consumeQueue)} INDEX: ${f(u.root)}], messages are put to the slave, ` +
      'message store has been shut down, etc.';
  }

  private async ratioOf(dir: string): Promise<number> {
    try {
      return diskUsedRatio(await this.env.statfs(dir));
    } catch (err) {
      this.d.logger.warn({ err, dir }, 'clean-up: cannot measure disk usage');
      return -1;
    }
  }

  /**
   * CleanCommitLogService.isSpaceToDelete: measures both partitions, sets or clears the disk-full flag and
   * `cleanImmediately`, and returns whether usage calls for deleting files.
   */
  checkDiskSpace(): Promise<boolean> {
    if (this.checking) return this.checking;
    const run = this.measureAndFlag().finally(() => {
      this.checking = null;
    });
    this.checking = run;
    return run;
  }

  private async measureAndFlag(): Promise<boolean> {
    const { config } = this.d;
    const [commitLog, consumeQueue, root] = await Promise.all([
      this.ratioOf(config.storePathCommitLog),
      this.ratioOf(this.d.cqStore.rootDir),
      this.ratioOf(config.storePathRootDir),
    ]);
    this.usage = { commitLog, consumeQueue, root };
    this.cleanImmediately = false;
    for (const [what, ratio] of [['commit log', commitLog], ['consume queue', consumeQueue]] as const) {
      if (ratio > this.warningRatio) {
        if (!this.diskFull) this.d.logger.error({ ratio, what }, 'disk maybe full soon, so mark disk full: puts are refused');
        this.diskFull = true;
        this.cleanImmediately = true;
        return true;
      }
      if (ratio > this.cleanForciblyRatio) {
        this.cleanImmediately = true;
        return true;
      }
      if (this.diskFull) this.d.logger.info({ ratio, what }, 'disk space OK, so mark disk ok');
      this.diskFull = false;
    }
    const max = this.maxUsedRatio;
    return commitLog < 0 || commitLog > max || consumeQueue < 0 || consumeQueue > max;
  }

  /** DefaultMessageStore.isTimeToDelete: the local hour is listed in deleteWhen. */
  isTimeToDelete(): boolean {
    return this.deleteHours().includes(new Date(this.env.now()).getHours());
  }

  /** One clean-up pass (the commit log, then the consume queues and index); concurrent calls share it. */
  runOnce(): Promise<CleanupRun> {
    if (this.running) return this.running;
    const run = (async (): Promise<CleanupRun> => {
      let commitLogFilesDeleted = 0;
      let consumeQueueFilesDeleted = 0;
      try {
        commitLogFilesDeleted = await this.cleanCommitLog();
        consumeQueueFilesDeleted = await this.cleanConsumeQueues();
      } catch (err) {
        this.d.logger.warn({ err }, 'clean-up failed');
      }
      return { commitLogFilesDeleted, consumeQueueFilesDeleted, minPhyOffset: this.d.commitLog.minOffset };
    })().finally(() => {
      this.running = null;
    });
    this.running = run;
    return run;
  }

  /** CleanCommitLogService.deleteExpiredFiles. */
  private async cleanCommitLog(): Promise<number> {
    const { config, logger } = this.d;
    const timeUp = this.isTimeToDelete();
    const spaceToDelete = await this.checkDiskSpace();
    const manual = this.manualDeleteRuns > 0;
    if (!timeUp && !spaceToDelete && !manual) return 0;
    if (manual) this.manualDeleteRuns--;
    const cleanAtOnce = config.cleanFileForciblyEnable && this.cleanImmediately;
    logger.info({ fileReservedTime: config.fileReservedTime, timeUp, spaceToDelete, manual, cleanAtOnce },
      'clean-up: deleting expired commit-log files');
    const deleted = await this.deleteExpiredCommitLogFiles(config.fileReservedTime * HOUR_MS, cleanAtOnce);
    if (deleted === 0 && spaceToDelete) logger.warn('disk space will be full soon, but no commit-log file could be deleted');
    return deleted;
  }

  /**
   * MappedFileQueue.deleteExpiredFileByTime: oldest first, stopping at the first file that is not expired (no
   * holes); never the file holding the newest byte nor the preallocated one after it; at most
   * deleteFileBatchMax per run. `cleanAtOnce` ignores expiry (the disk is nearly full).
   *
   * Unlike Java, which corrects the consume queues only after the whole batch (CleanConsumeQueueService runs
   * after CleanCommitLogService, up to deleteFileBatchMax × deleteCommitLogFilesInterval later), every queue's
   * min is raised past the doomed files before the first of them leaves the log: a queue's min never points
   * at a deleted record, so a pull below it is always told PULL_OFFSET_MOVED, never MESSAGE_WAS_REMOVING.
   */
  async deleteExpiredCommitLogFiles(expiredMs: number, cleanAtOnce: boolean): Promise<number> {
    const { config, commitLog, logger } = this.d;
    const doomed = await this.expiredCommitLogFiles(expiredMs, cleanAtOnce);
    if (doomed.length === 0) return 0;
    await this.raiseQueueMins(doomed[doomed.length - 1]!.endOffset);
    let deleted = 0;
    for (const file of doomed) {
      // Dropping the head file moves the log's min.
      if (this.stopped || !commitLog.dropOldestFile(file)) break;
      deleted++;
      logger.info({ file: file.filePath, minPhyOffset: commitLog.minOffset, forced: cleanAtOnce }, 'clean-up: deleting commit-log file');
      await file.destroyWhenIdle(config.destroyMapedFileIntervalForcibly).catch((err: unknown) => {
        logger.warn({ err, file: file.filePath }, 'clean-up: deleting a commit-log file failed');
      });
      if (config.deleteCommitLogFilesInterval > 0 && deleted < doomed.length) await sleep(config.deleteCommitLogFilesInterval);
    }
    return deleted;
  }

  /** The leading commit-log files this run may delete (expired, or any with `cleanAtOnce`), oldest first. */
  private async expiredCommitLogFiles(expiredMs: number, cleanAtOnce: boolean): Promise<CommitLogFile[]> {
    const { config, commitLog, logger } = this.d;
    const newestByte = Math.max(commitLog.writtenOffset - 1, commitLog.minOffset);
    const out: CommitLogFile[] = [];
    // The last file holds the newest byte (or is the preallocated next one): never a candidate.
    for (let i = 0; i < commitLog.files.length - 1 && out.length < config.deleteFileBatchMax; i++) {
      const file = commitLog.files[i]!;
      if (file.endOffset > newestByte) break;
      let mtimeMs: number;
      try {
        mtimeMs = await this.env.fileMtimeMs(file.filePath);
      } catch (err) {
        logger.warn({ err, file: file.filePath }, 'clean-up: cannot stat commit-log file');
        break;
      }
      if (this.env.now() < mtimeMs + expiredMs && !cleanAtOnce) break;
      out.push(file);
    }
    return out;
  }

  /** Raises every consume queue's min to its first entry at or after `minPhyOffset` (Java correctMinOffset). */
  private async raiseQueueMins(minPhyOffset: number): Promise<void> {
    for (const cq of [...this.d.cqStore.all()]) {
      if (this.stopped) return;
      await cq.correctMinOffset(minPhyOffset);
    }
  }

  /** CleanConsumeQueueService.deleteExpiredFiles: runs once per advance of the commit-log minimum. */
  private async cleanConsumeQueues(): Promise<number> {
    const { config, commitLog, cqStore } = this.d;
    const minPhyOffset = commitLog.minOffset;
    if (minPhyOffset <= this.lastPhysicalMinOffset) return 0;
    this.lastPhysicalMinOffset = minPhyOffset;
    let deleted = 0;
    for (const cq of [...cqStore.all()]) {
      if (this.stopped) break;
      const n = await cq.deleteExpiredFiles(minPhyOffset, config.destroyMapedFileIntervalForcibly);
      await cq.correctMinOffset(minPhyOffset);
      deleted += n;
      if (n > 0 && config.deleteConsumeQueueFilesInterval > 0) await sleep(config.deleteConsumeQueueFilesInterval);
    }
    try {
      this.d.onMinPhyOffsetAdvanced(minPhyOffset);
    } catch (err) {
      this.d.logger.warn({ err }, 'clean-up: deleting expired index files failed');
    }
    return deleted;
  }

  /** At start-up (Java recoverTopicQueueTable): every queue's min moves to the commit log's min. */
  async correctConsumeQueueMins(): Promise<void> {
    const min = this.d.commitLog.minOffset;
    if (min > 0) await this.raiseQueueMins(min);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
