import type { Logger } from '../../common/logger.js';
import type { DispatchedEntry } from '../../store/index.js';

/** A parked pull (Java PullRequest): re-run when a message lands in its queue or when it times out. */
interface HeldPull {
  key: string;
  queueOffset: number;
  timer: NodeJS.Timeout;
  wake: () => void;
  /** The pull's message filter (SQL92): an arriving message it rejects does not wake it. */
  matches?: (entry: DispatchedEntry) => boolean;
}

/** How many pulls may be parked at once across all connections; beyond it pulls answer at once. */
export const MAX_HELD_PULLS = 100_000;

/**
 * Long polling (Java PullRequestHoldService): pulls that found nothing wait for a new message in their
 * topic/queue, or for their deadline, and are then re-run without suspension.
 */
export class PullRequestHoldService {
  private readonly held = new Map<string, Set<HeldPull>>();
  private count = 0;

  constructor(private readonly logger: Logger) {}

  get heldCount(): number {
    return this.count;
  }

  /**
   * Parks a pull; `wake` runs exactly once. Returns false when the service is full (caller answers now).
   * `matches` (Java: MessageFilter checked in notifyMessageArriving) keeps it parked for messages it would drop.
   */
  hold(
    topic: string, queueId: number, queueOffset: number, timeoutMs: number, wake: () => void,
    matches?: (entry: DispatchedEntry) => boolean,
  ): boolean {
    if (this.count >= MAX_HELD_PULLS) return false;
    const key = `${topic}@${queueId}`;
    const entry: HeldPull = {
      key,
      queueOffset,
      wake,
      matches,
      timer: setTimeout(() => this.release(entry), Math.max(0, timeoutMs)),
    };
    let set = this.held.get(key);
    if (!set) {
      set = new Set();
      this.held.set(key, set);
    }
    set.add(entry);
    this.count++;
    return true;
  }

  /** Store dispatch listener: wakes the pulls waiting on this queue whose offset is now readable. */
  onDispatch = (entry: DispatchedEntry): void => {
    // Called for every stored message: no key string to build while nobody waits.
    if (this.count === 0) return;
    const set = this.held.get(`${entry.topic}@${entry.queueId}`);
    if (!set) return;
    for (const h of set) {
      if (entry.queueOffset < h.queueOffset) continue;
      if (h.matches) {
        let wanted = true;
        try {
          wanted = h.matches(entry);
        } catch (err) {
          this.logger.error({ err }, 'held pull filter failed; waking it');
        }
        if (!wanted) continue;
      }
      this.release(h);
    }
  };

  private release(h: HeldPull): void {
    const set = this.held.get(h.key);
    if (!set || !set.delete(h)) return;
    if (set.size === 0) this.held.delete(h.key);
    this.count--;
    clearTimeout(h.timer);
    try {
      h.wake();
    } catch (err) {
      this.logger.error({ err }, 'held pull failed on wake-up');
    }
  }

  /** Answers every parked pull now (shutdown). */
  shutdown(): void {
    for (const set of [...this.held.values()]) for (const h of [...set]) this.release(h);
  }
}
