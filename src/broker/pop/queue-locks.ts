// Per-queue locks of POP (Java PopMessageProcessor.QueueLockManager), keyed `<topic>@<group>@<queueId>`. A pop
// only tries (a busy queue is skipped and counted in restNum); an orderly ack or ChangeInvisibleTime waits, as Java
// spins on tryLock. The event loop makes each step atomic; the lock covers the awaits in between (store reads,
// checkpoint appends).
export class QueueLocks {
  private readonly held = new Set<string>();
  private readonly waiters = new Map<string, Array<() => void>>();

  tryLock(key: string): boolean {
    if (this.held.has(key)) return false;
    this.held.add(key);
    return true;
  }

  /** Resolves once the lock is ours. */
  lock(key: string): Promise<void> {
    if (this.tryLock(key)) return Promise.resolve();
    return new Promise((resolve) => {
      let list = this.waiters.get(key);
      if (!list) {
        list = [];
        this.waiters.set(key, list);
      }
      list.push(resolve);
    });
  }

  /** Hands the lock to the next waiter, if any. */
  unlock(key: string): void {
    const list = this.waiters.get(key);
    const next = list?.shift();
    if (list && list.length === 0) this.waiters.delete(key);
    if (next) next();
    else this.held.delete(key);
  }

  isLocked(key: string): boolean {
    return this.held.has(key);
  }

  /** Runs `fn` under the lock, waiting for it. */
  async with<T>(key: string, fn: () => Promise<T> | T): Promise<T> {
    await this.lock(key);
    try {
      return await fn();
    } finally {
      this.unlock(key);
    }
  }
}
