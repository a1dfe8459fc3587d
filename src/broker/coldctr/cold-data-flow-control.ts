// Cold-data flow control (5.x; off unless coldDataFlowControlEnable): consumer groups reading far behind the log's
// end are slowed down so they do not evict what the others read from the page cache. Java: broker/coldctr
// (ColdDataCgCtrService, ColdDataPullRequestHoldService, the two ColdCtrStrategy classes), the pull processor's check
// and DefaultMessageStore.checkInColdAreaByCommitOffset.
//
// Each pull adds the bytes it read from the cold area to its group's counter and to a broker-wide one; both are
// reset every 5 s. A group past its threshold (an operator's from UPDATE_COLD_DATA_FLOW_CTR_CONFIG, else
// cgColdReadThreshold), or any group while the broker-wide counter is past globalColdReadThreshold, has its pulls of
// cold data slowed: a push consumer's answered SYSTEM_BUSY, a pull consumer's held 3 s and then served one message.
//
// "Cold" is by distance only: further behind the log's end than accessMessageInMemoryHotRatio % of RAM. Java can
// also ask the kernel which pages are resident (coldDataScanEnable, mincore on its mapped files); we read with
// pread and have no mapping to ask, so that key is accepted and has no effect (Java's answer with it off).
import os from 'node:os';

/** Java ColdDataCgCtrService ADAPTIVE: the suffix of the thresholds the strategies set. */
const ADAPTIVE = '||adaptive';
/** A group that read no cold data for this long leaves the runtime table (Java cgColdAccResideTimeoutMills). */
const RESIDE_TIMEOUT_MS = 60_000;
/** Counters are reset this often while enabled (Java: 5 s; 180 s while disabled). */
export const COLD_CLEAR_INTERVAL_MS = 5_000;
const COLD_CLEAR_INTERVAL_DISABLED_MS = 180_000;
/** A pull consumer's pull of cold data is held this long (Java coldHoldTimeoutMillis; it checks every 5 s). */
export const COLD_HOLD_MS = 3_000;
/** Pulls held at once (Java's queue of 10,000 drops the pull beyond it; we serve it at once, one message). */
export const COLD_HOLD_MAX = 10_000;
/**
 * Ours: groups in the runtime table at most (one entry per group that read cold data in the last minute; a group
 * beyond it is neither counted nor slowed). With the thresholds' bound it keeps GET_COLD_DATA_FLOW_CTR_INFO's
 * answer near 2.6 MB and its JSON near 15 ms at most (measured: 20,000 + 10,000 entries).
 */
const MAX_RUNTIME_GROUPS = 20_000;
/** Ours: thresholds kept at most (operators' and the strategies'); Java's table has no bound. */
export const MAX_CONFIGURED_GROUPS = 10_000;
/** Java PIDAdaptiveColdCtrStrategy: the history kept and the weights. */
const PID_HISTORY = 10;
const KP = 0.5;
const KI = 0.3;
const KD = 0.2;

/** The keys this reads, live (BrokerConfig and MessageStoreConfig in Java). */
export interface ColdCtrConfig {
  coldDataFlowControlEnable: boolean;
  coldCtrStrategyEnable: boolean;
  usePIDColdCtrStrategy: boolean;
  cgColdReadThreshold: number;
  globalColdReadThreshold: number;
  accessMessageInMemoryHotRatio: number;
}

interface Acc {
  coldAcc: number;
  createTimeMills: number;
  lastColdReadTimeMills: number;
}

/** Java MixAll.isSysConsumerGroupPullMessage: the groups never slowed nor counted. */
const SYS_GROUPS = new Set([
  'DEFAULT_CONSUMER', 'TOOLS_CONSUMER', 'SCHEDULE_CONSUMER', 'FILTERSRV_CONSUMER', '__MONITOR_CONSUMER', 'SELF_TEST_C_GROUP',
  'CID_ONS-HTTP-PROXY', 'CID_ONSAPI_PERMISSION', 'CID_ONSAPI_OWNER', 'CID_ONSAPI_PULL', 'CID_RMQ_SYS_TRANS',
]);

export function isSysConsumerGroup(group: string): boolean {
  return SYS_GROUPS.has(group) || group.startsWith('CID_RMQ_SYS_');
}

export class ColdDataFlowControl {
  private readonly runtime = new Map<string, Acc>();
  private readonly configured = new Map<string, number>();
  private globalAcc = 0;
  private readonly pidHistory: number[] = [];
  private pidError = 0;
  private lastClearMs: number;
  private held = 0;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly config: ColdCtrConfig,
    private readonly totalMemoryBytes: number = os.totalmem(),
    private readonly now: () => number = Date.now,
  ) {
    this.lastClearMs = now();
  }

  start(): void {
    this.timer ??= setInterval(() => this.tick(), COLD_CLEAR_INTERVAL_MS);
    this.timer.unref();
  }

  shutdown(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Runs the reset when due: every 5 s while enabled, every 180 s while not (as Java's service thread waits). */
  tick(): void {
    const interval = this.config.coldDataFlowControlEnable ? COLD_CLEAR_INTERVAL_MS : COLD_CLEAR_INTERVAL_DISABLED_MS;
    if (this.now() - this.lastClearMs < interval - 50) return;
    this.clearDataAcc();
    if (!this.config.coldCtrStrategyEnable) {
      for (const key of [...this.configured.keys()]) if (key.endsWith(ADAPTIVE)) this.configured.delete(key);
    }
  }

  /** Whether a commit-log offset lies in the cold area (Java DefaultMessageStore.checkInColdAreaByCommitOffset). */
  isColdArea(commitLogOffset: number, maxPhyOffset: number): boolean {
    return maxPhyOffset - commitLogOffset > Math.floor(this.totalMemoryBytes * (this.config.accessMessageInMemoryHotRatio / 100));
  }

  /** The cold bytes among a pull's records (whole stored records; Java's GetMessageResult.coldDataSum). */
  coldBytesOf(group: string, records: readonly Buffer[], maxPhyOffset: number): number {
    if (!this.config.coldDataFlowControlEnable || isSysConsumerGroup(group)) return 0;
    let sum = 0;
    for (const r of records) {
      if (r.length >= 36 && this.isColdArea(Number(r.readBigInt64BE(28)), maxPhyOffset)) sum += r.length;
    }
    return sum;
  }

  /** Java coldAcc: adds a pull's cold bytes to its group's counter and the broker's. */
  coldAcc(group: string, bytes: number): void {
    if (bytes <= 0) return;
    this.globalAcc += bytes;
    const nowMs = this.now();
    const acc = this.runtime.get(group);
    if (acc) {
      acc.coldAcc += bytes;
      acc.lastColdReadTimeMills = nowMs;
    } else if (this.runtime.size < MAX_RUNTIME_GROUPS) {
      // in the order Java's JSON lists the fields
      this.runtime.set(group, { coldAcc: bytes, createTimeMills: nowMs, lastColdReadTimeMills: nowMs });
    }
  }

  /** Java isCgNeedColdDataFlowCtr: whether the group's pulls of cold data are slowed now. */
  groupNeedsFlowControl(group: string): boolean {
    if (!this.config.coldDataFlowControlEnable || isSysConsumerGroup(group)) return false;
    const acc = this.runtime.get(group);
    if (!acc) return false;
    if (acc.coldAcc >= this.thresholdOf(group)) return true;
    return this.globalAcc >= this.config.globalColdReadThreshold;
  }

  /** UPDATE_COLD_DATA_FLOW_CTR_CONFIG: an operator's threshold for a group, bytes per 5 s; false when the table is full. */
  setGroupThreshold(group: string, thresholdBytes: number): boolean {
    return this.setThreshold(group, thresholdBytes);
  }

  /** REMOVE_COLD_DATA_FLOW_CTR_CONFIG. */
  removeGroupThreshold(group: string): void {
    this.configured.delete(group);
  }

  /** Takes a hold slot for a pull consumer's cold pull; false when COLD_HOLD_MAX are held. */
  tryHold(): boolean {
    if (this.held >= COLD_HOLD_MAX) return false;
    this.held++;
    return true;
  }

  releaseHold(): void {
    if (this.held > 0) this.held--;
  }

  get heldPulls(): number {
    return this.held;
  }

  /** GET_COLD_DATA_FLOW_CTR_INFO's body, the fields Java's getColdDataFlowCtrInfo writes. */
  info(): Record<string, unknown> {
    return {
      runtimeTable: Object.fromEntries(this.runtime),
      configTable: Object.fromEntries(this.configured),
      cgColdReadThreshold: this.config.cgColdReadThreshold,
      globalColdReadThreshold: this.config.globalColdReadThreshold,
      globalAcc: this.globalAcc,
    };
  }

  /** Java clearDataAcc: drops groups quiet for a minute, lets the strategy adjust thresholds, resets the counters. */
  private clearDataAcc(): void {
    this.lastClearMs = this.now();
    const strategy = this.config.coldCtrStrategyEnable;
    if (strategy) this.collect(this.globalAcc);
    for (const [group, acc] of this.runtime) {
      if (this.now() >= acc.lastColdReadTimeMills + RESIDE_TIMEOUT_MS) {
        if (strategy) this.configured.delete(group + ADAPTIVE);
        this.runtime.delete(group);
        continue;
      }
      if (acc.coldAcc >= this.thresholdOf(group) && strategy && !this.isGlobalColdCtr() && !this.isAdminConfig(group)) {
        this.promote(group + ADAPTIVE, this.thresholdOf(group));
      }
      acc.coldAcc = 0;
    }
    if (strategy) this.sortAndDecelerate();
    this.globalAcc = 0;
  }

  private isGlobalColdCtr(): boolean {
    return this.globalAcc > this.config.globalColdReadThreshold;
  }

  private isAdminConfig(key: string): boolean {
    return this.configured.has(baseOf(key));
  }

  private thresholdOf(key: string): number {
    if (this.isAdminConfig(key)) return this.configured.get(baseOf(key))!;
    let threshold: number | undefined;
    if (this.config.coldCtrStrategyEnable) {
      threshold = this.configured.get(key.endsWith(ADAPTIVE) ? key : key + ADAPTIVE);
    }
    return threshold ?? this.config.cgColdReadThreshold;
  }

  /** Lowers (by a fifth, not below cgColdReadThreshold) the three highest thresholds no operator set. */
  private sortAndDecelerate(): void {
    const entries = [...this.configured.entries()].sort((a, b) => b[1] - a[1]);
    let left = 3;
    for (const [key] of entries) {
      if (left === 0) break;
      if (this.isAdminConfig(key)) continue;
      this.decelerate(key, this.thresholdOf(key));
      left--;
    }
  }

  // The strategies (Java SimpleColdCtrStrategy, PIDAdaptiveColdCtrStrategy; the latter is Java's default).

  private pidFactor(): number {
    const h = this.pidHistory;
    if (h.length < PID_HISTORY) return 0;
    const differential = h[h.length - 1]! - h[h.length - 2]!;
    let integration = 0;
    for (const v of h) integration += v;
    return KP * this.pidError + KI * integration + KD * differential;
  }

  private collect(globalAcc: number): void {
    if (!this.config.usePIDColdCtrStrategy) return;
    this.pidError = Math.floor(this.config.globalColdReadThreshold * 0.8) - globalAcc;
    this.pidHistory.push(this.pidError);
    while (this.pidHistory.length > PID_HISTORY) this.pidHistory.shift();
  }

  private promote(key: string, current: number): void {
    if (this.config.usePIDColdCtrStrategy && !(this.pidFactor() > 0)) return;
    this.setThreshold(key, Math.floor(current * 1.5));
  }

  private decelerate(key: string, current: number): void {
    if (this.config.usePIDColdCtrStrategy ? !(this.pidFactor() < 0) : !this.isGlobalColdCtr()) return;
    this.setThreshold(key, Math.max(Math.floor(current * 0.8), this.config.cgColdReadThreshold));
  }

  private setThreshold(key: string, thresholdBytes: number): boolean {
    if (!this.configured.has(key) && this.configured.size >= MAX_CONFIGURED_GROUPS) return false;
    this.configured.set(key, thresholdBytes);
    return true;
  }
}

function baseOf(key: string): string {
  return key.endsWith(ADAPTIVE) ? key.slice(0, key.indexOf(ADAPTIVE)) : key;
}
