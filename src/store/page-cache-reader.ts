// Positional reads of recent store data (pulls beyond the in-memory tail). A read served by the page cache is a
// memory copy of tens of microseconds; sending it through libuv's thread pool costs more than that in hand-offs
// (a queue lock, a wake-up, a completion event per read), and a drain of a large backlog makes two such reads per
// pull. So reads the caller expects to be cached run synchronously on the event loop, the way Java's pull
// threads copy out of a mapped file, while they stay fast: `slowStreak` reads in a row that each take longer than
// `slowReadMs` (the page cache missed and the disk answered) send every read to the thread pool for `backoffMs`.
// One slow read alone proves nothing: on a busy machine the event loop's thread is preempted now and then, and
// a read it was in looks slow (measured: about one read in a hundred while a load driver shared the two cores).
import { performance } from 'node:perf_hooks';
import { readFully, readFullySync } from './io.js';

/** Larger reads always go to the thread pool: a multi-megabyte copy would hold the event loop too long. */
export const SYNC_READ_MAX_BYTES = 1024 * 1024;

export interface PageCacheReaderStats {
  syncReads: number;
  asyncReads: number;
  slowSyncReads: number;
}

export class PageCacheReader {
  readonly stats: PageCacheReaderStats = { syncReads: 0, asyncReads: 0, slowSyncReads: 0 };
  private asyncUntilMs = 0;
  private slowInARow = 0;

  constructor(
    private readonly slowReadMs = 2,
    private readonly slowStreak = 3,
    private readonly backoffMs = 1000,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Whether a read of `length` bytes expected in the page cache would run on the event loop right now. */
  wouldReadSync(length: number, likelyCached: boolean): boolean {
    return likelyCached && length <= SYNC_READ_MAX_BYTES && this.now() >= this.asyncUntilMs;
  }

  /** Reads exactly `length` bytes at `position` (fewer at end of file); see the file comment for sync vs async. */
  read(fd: number, buf: Buffer, offset: number, length: number, position: number, likelyCached: boolean): Promise<number> {
    if (!this.wouldReadSync(length, likelyCached)) {
      this.stats.asyncReads++;
      return readFully(fd, buf, offset, length, position);
    }
    this.stats.syncReads++;
    const startedMs = this.now();
    let n: number;
    try {
      n = readFullySync(fd, buf, offset, length, position);
    } catch (err) {
      return Promise.reject(err);
    }
    const endedMs = this.now();
    if (endedMs - startedMs > this.slowReadMs) {
      this.stats.slowSyncReads++;
      if (++this.slowInARow >= this.slowStreak) {
        this.slowInARow = 0;
        this.asyncUntilMs = endedMs + this.backoffMs;
      }
    } else {
      this.slowInARow = 0;
    }
    return Promise.resolve(n);
  }
}
