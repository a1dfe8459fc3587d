// SYNC_MASTER's wait for slaves (Java GroupTransferService), in the two official flavours (haSemantics):
//
//   5.3.3 (CommitLog.handleHA, DefaultHAService.inSyncReplicasNums): a put needs inSyncReplicas copies, the master
//     counting as one; 1 (the default) means no wait at all. Otherwise it waits until 1 + the number of slave links
//     whose own ack reached the put's end is enough, or FLUSH_SLAVE_TIMEOUT after slaveTimeout. Never
//     SLAVE_NOT_AVAILABLE.
//   4.9.8 (CommitLog.submitReplicaRequest, HAService.isSlaveOK): SLAVE_NOT_AVAILABLE at once when no slave is
//     linked or the highest ack of any slave lags the put's end by haSlaveFallbehindMax or more; otherwise it waits
//     for that highest ack (Java push2SlaveMaxOffset, never lowered) to reach the end, or FLUSH_SLAVE_TIMEOUT.
//
// Waits come in log order with the same timeout, so they sit in one FIFO: an ack settles a prefix, one timer
// watches the oldest deadline.
import type { PutStatus } from '../store/index.js';
import type { HaConfig } from './types.js';

/** What the waits need to know about the slaves. */
export interface AckView {
  /** Live slave links. */
  readonly linkCount: number;
  /** Highest ack ever seen from any slave (4.9.8 push2SlaveMaxOffset). */
  readonly maxAckOffset: number;
  /** Slave links whose ack reached `offset` (5.3.3). */
  linksAckedAtLeast(offset: number): number;
}

interface Pending {
  endOffset: number;
  deadlineMs: number;
  resolve: (s: PutStatus) => void;
}

export class ReplicaWaits {
  private queue: Pending[] = [];
  private head = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly config: HaConfig,
    private readonly acks: AckView,
  ) {}

  /** The replica stage's ReplicaWait: a status now, or the promise of one. */
  readonly wait = (endOffset: number): PutStatus | Promise<PutStatus> => {
    const c = this.config;
    if (c.haSemantics === '4.9.8') {
      if (this.acks.linkCount === 0 || endOffset - this.acks.maxAckOffset >= c.haSlaveFallbehindMax) return 'SLAVE_NOT_AVAILABLE';
    } else if (c.inSyncReplicas <= 1) {
      return 'PUT_OK';
    }
    if (this.satisfied(endOffset)) return 'PUT_OK';
    return new Promise<PutStatus>((resolve) => {
      this.queue.push({ endOffset, deadlineMs: Date.now() + c.slaveTimeout, resolve });
      if (!this.timer) this.arm();
    });
  };

  private satisfied(endOffset: number): boolean {
    if (this.config.haSemantics === '4.9.8') return this.acks.maxAckOffset >= endOffset;
    return 1 + this.acks.linksAckedAtLeast(endOffset) >= this.config.inSyncReplicas;
  }

  /** A slave acked more (or a link came or went): settle what is satisfied now. */
  onAcksChanged(): void {
    while (this.head < this.queue.length && this.satisfied(this.queue[this.head]!.endOffset)) {
      this.queue[this.head++]!.resolve('PUT_OK');
    }
    this.compact();
  }

  private arm(): void {
    const first = this.queue[this.head];
    if (!first) return;
    this.timer = setTimeout(() => this.expire(), Math.max(0, first.deadlineMs - Date.now()));
  }

  private expire(): void {
    this.timer = null;
    const now = Date.now();
    this.onAcksChanged();
    while (this.head < this.queue.length && this.queue[this.head]!.deadlineMs <= now) {
      this.queue[this.head++]!.resolve('FLUSH_SLAVE_TIMEOUT');
    }
    this.compact();
    this.arm();
  }

  private compact(): void {
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
      if (this.timer) {
        clearTimeout(this.timer);
        this.timer = null;
      }
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }

  /** Pending waits (haStatus, tests). */
  get pending(): number {
    return this.queue.length - this.head;
  }

  /** Shutdown: every wait still pending times out now. */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (let i = this.head; i < this.queue.length; i++) this.queue[i]!.resolve('FLUSH_SLAVE_TIMEOUT');
    this.queue = [];
    this.head = 0;
  }
}
