import path from 'node:path';
import type { Logger } from '../../common/logger.js';
import { TableFile } from '../../common/table-file.js';
import { MessageConst, getProperty, parseProperties, encodeProperties } from '../../common/message-properties.js';
import { decodeRecord, type DispatchedEntry, type MessageStore, type MessageToStore } from '../../store/index.js';
import { SystemTopic } from '../topic/topic-config.js';
import { messageFromRecord } from '../stored-message.js';

const TRANSACTION_TYPE_MASK = 0xc;
const TRANSACTION_PREPARED = 0x4;
const TRANSACTION_ROLLBACK = 0xc;
/** Java ScheduleMessageService: retry a failed put after 100 ms. */
const RETRY_AFTER_FAILURE_MS = 100;
/** MessageStoreConfig.flushDelayOffsetInterval (Java 10 s). */
const FLUSH_DELAY_OFFSET_INTERVAL_MS = 10_000;
const BATCH = 32;

/**
 * Delay levels (Java ScheduleMessageService + HookUtils.handleScheduleMessage): messages with DELAY > 0 are
 * parked in SCHEDULE_TOPIC_XXXX (queue = level − 1) and re-put to REAL_TOPIC/REAL_QID when due. Progress per
 * level is kept in `<store>/config/delayOffset.json`.
 */
export class ScheduleMessageService {
  private readonly offsets = new Map<number, number>();
  private readonly timers = new Map<number, NodeJS.Timeout>();
  private readonly running = new Set<number>();
  /** Levels that got a new message while their delivery loop was running. */
  private readonly rerun = new Set<number>();
  private started = false;
  private readonly file: TableFile;

  constructor(
    storePathRootDir: string,
    readonly delayLevelsMs: number[],
    private readonly store: MessageStore,
    private readonly logger: Logger,
  ) {
    this.file = new TableFile(path.join(storePathRootDir, 'config', 'delayOffset.json'), () => this.encode(), logger, 'delay offsets');
  }

  get maxLevel(): number {
    return this.delayLevelsMs.length;
  }

  load(): void {
    const data = this.file.load() as { offsetTable?: Record<string, unknown> } | undefined;
    for (const [level, off] of Object.entries(data?.offsetTable ?? {})) this.offsets.set(Number(level), Number(off));
  }

  start(): void {
    this.started = true;
    for (let level = 1; level <= this.maxLevel; level++) this.schedule(level, 1000);
    this.file.saveEvery(FLUSH_DELAY_OFFSET_INTERVAL_MS);
  }

  /** Stops delivering, then saves the offsets (after a periodic save in flight). */
  async shutdown(): Promise<void> {
    this.started = false;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    await this.file.close();
  }

  /**
   * The put hook: a message with DELAY > 0 (and not a prepared/rolled-back transaction) is redirected to the
   * schedule topic. Returns the message to store (the same object, changed in place).
   */
  applyDelay(msg: MessageToStore): MessageToStore {
    const txType = msg.sysFlag & TRANSACTION_TYPE_MASK;
    if (txType === TRANSACTION_PREPARED || txType === TRANSACTION_ROLLBACK) return msg;
    const raw = getProperty(msg.propertiesString, MessageConst.DELAY_TIME_LEVEL);
    if (raw === undefined) return msg;
    let level = Number.parseInt(raw, 10);
    if (!(level > 0)) return msg;
    if (level > this.maxLevel) level = this.maxLevel;
    const props = parseProperties(msg.propertiesString);
    props.set(MessageConst.DELAY_TIME_LEVEL, String(level));
    props.set(MessageConst.REAL_TOPIC, msg.topic);
    props.set(MessageConst.REAL_QUEUE_ID, String(msg.queueId));
    msg.propertiesString = encodeProperties(props);
    msg.topic = SystemTopic.SCHEDULE_TOPIC;
    msg.queueId = level - 1;
    msg.tagsCode = Date.now() + this.delayLevelsMs[level - 1];
    return msg;
  }

  /** Store dispatch listener: a new parked message may be due before the level's next check. */
  onDispatch = (entry: DispatchedEntry): void => {
    if (!this.started || entry.topic !== SystemTopic.SCHEDULE_TOPIC) return;
    const level = entry.queueId + 1;
    if (this.running.has(level)) {
      this.rerun.add(level);
    } else if (!this.timers.has(level)) {
      this.schedule(level, this.delayLevelsMs[level - 1] ?? 1000);
    }
  };

  private schedule(level: number, delayMs: number): void {
    if (!this.started) return;
    const existing = this.timers.get(level);
    if (existing) clearTimeout(existing);
    const t = setTimeout(() => {
      this.timers.delete(level);
      void this.deliver(level);
    }, Math.max(0, delayMs));
    t.unref();
    this.timers.set(level, t);
  }

  /** Delivers every due message of one level in queue order; re-arms a timer for the first not-yet-due one. */
  private async deliver(level: number): Promise<void> {
    if (this.running.has(level)) return;
    this.running.add(level);
    const queueId = level - 1;
    const delayMs = this.delayLevelsMs[level - 1];
    try {
      for (;;) {
        if (!this.started) return;
        let offset = this.offsets.get(level) ?? 0;
        const min = this.store.getMinOffsetInQueue(SystemTopic.SCHEDULE_TOPIC, queueId);
        if (offset < min) offset = min;
        const res = await this.store.getMessage(SystemTopic.SCHEDULE_TOPIC, queueId, offset, BATCH, 4 * 1024 * 1024);
        if (res.status !== 'FOUND' || res.records.length === 0) {
          if (res.nextBeginOffset > offset && res.status !== 'OFFSET_OVERFLOW_BADLY') this.setOffset(level, res.nextBeginOffset);
          return; // nothing parked: the dispatch listener re-arms this level
        }
        for (const record of res.records) {
          const rec = decodeRecord(record);
          const dueMs = rec.storeTimestamp + delayMs;
          const now = Date.now();
          if (dueMs > now) {
            this.schedule(level, Math.min(dueMs - now, delayMs));
            return;
          }
          const ok = await this.redeliver(rec);
          if (!ok) {
            this.schedule(level, RETRY_AFTER_FAILURE_MS);
            return;
          }
          this.setOffset(level, rec.queueOffset + 1);
        }
      }
    } catch (err) {
      this.logger.error({ err, level }, 'delay-level delivery failed; retrying in 10 s');
      this.schedule(level, 10_000);
    } finally {
      this.running.delete(level);
      if (this.rerun.delete(level) && !this.timers.has(level)) this.schedule(level, 0);
    }
  }

  private async redeliver(rec: ReturnType<typeof decodeRecord>): Promise<boolean> {
    const props = parseProperties(rec.propertiesString);
    const realTopic = props.get(MessageConst.REAL_TOPIC);
    const realQid = Number(props.get(MessageConst.REAL_QUEUE_ID));
    if (!realTopic || !Number.isInteger(realQid)) {
      this.logger.warn({ offset: rec.commitLogOffset }, 'parked message has no REAL_TOPIC/REAL_QID; skipped');
      return true;
    }
    if (realTopic === SystemTopic.TRANS_HALF) return true; // Java drops these
    // DELAY stays: official 4.9.8 / 5.3.3 deliver the message with its DELAY level (getDelayTimeLevel() on the consumer)
    props.delete('TIMER_DELIVER_MS');
    props.delete('TIMER_DELAY_SEC');
    props.set(MessageConst.WAIT_STORE_MSG_OK, 'false');
    const msg = messageFromRecord(rec, realTopic, realQid, props);
    const result = await this.store.putMessage(msg);
    if (result.status !== 'PUT_OK' && result.status !== 'FLUSH_DISK_TIMEOUT') {
      this.logger.warn({ status: result.status, topic: realTopic }, 'delivering a delayed message failed');
      return false;
    }
    return true;
  }

  private setOffset(level: number, offset: number): void {
    this.offsets.set(level, offset);
    this.file.changed();
  }

  /**
   * A slave takes its master's delay offsets (Java SlaveSynchronize.syncDelayOffset; 5.3.3 also reloads them into
   * the service, as here): the table is replaced and written.
   */
  replaceFromMaster(wrapper: { offsetTable?: Record<string, unknown> }): void {
    if (!wrapper.offsetTable || typeof wrapper.offsetTable !== 'object') return;
    this.offsets.clear();
    for (const [level, off] of Object.entries(wrapper.offsetTable)) {
      const l = Number(level);
      const o = Number(off);
      if (Number.isInteger(l) && Number.isSafeInteger(o)) this.offsets.set(l, o);
    }
    this.file.request();
  }

  /** Next queue offset to deliver per level (GET_ALL_DELAY_OFFSET). */
  offsetTable(): Map<number, number> {
    return this.offsets;
  }

  encode(): string {
    const inner = [...this.offsets].map(([l, o]) => `${l}:${o}`).join(',');
    return `{\n\t"offsetTable":{${inner}}\n}`;
  }
}
