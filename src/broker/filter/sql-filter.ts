// Broker-side SQL92 filtering: Java ExpressionMessageFilter.isMatchedByCommitLog (and
// ExpressionForRetryMessageFilter), handed to the store's read as a MessageFilter, which applies it while
// scanning (DefaultMessageStore.getMessage).
import { MessageConst, lastPropertyOf } from '../../common/message-properties.js';
import type { MessageFilter } from '../../store/index.js';
import type { ConsumerManager } from '../client/consumer-manager.js';
import type { SubscriptionData } from '../client/types.js';
import { RETRY_GROUP_TOPIC_PREFIX } from '../topic/topic-config.js';
import { type CompiledFilter, type PropertyBytes, type PropertySource, compileSql92, propertyKeyBytes } from './sql92/index.js';

/** Decides from a message's properties whether it is delivered. */
export type PropertiesFilter = (props: PropertySource) => boolean;

/** A record's properties as parseProperties would map them, each read from the string when asked for. */
class PropertiesStringSource implements PropertySource {
  constructor(private readonly propertiesString: string) {}
  get(name: string): string | undefined {
    return lastPropertyOf(this.propertiesString, name);
  }
}

/**
 * A record's properties read from its bytes (`name \x01 value \x02 ...`, UTF-8) where a selector looks them up,
 * giving what PropertiesStringSource gives on the decoded string: the last property of the name with a non-empty
 * value. Bytes 1 and 2 occur in UTF-8 only as those characters, and an ASCII name matches a key exactly when the
 * key's bytes are the name's, so nothing needs decoding but the values asked for. One instance is reused, record
 * after record (set() points it at the next record; the evaluation in between is synchronous).
 */
export class RecordPropertiesSource implements PropertySource, PropertyBytes {
  buf: Buffer = Buffer.alloc(0);
  private start = 0;
  private end = 0;
  valueEnd = 0;
  private decoded: string | undefined;

  readonly bytes: PropertyBytes = this;

  /** Points at the properties in buf [start, end). */
  set(buf: Buffer, start: number, end: number): this {
    this.buf = buf;
    this.start = start;
    this.end = end;
    this.decoded = undefined;
    return this;
  }

  find(key: Uint8Array): number {
    const buf = this.buf;
    const end = this.end;
    const n = key.length;
    let found = -1;
    let pos = this.start;
    while (pos < end) {
      // pos starts a property: does its name match the key (the key holds no byte 1 or 2)?
      let i = 0;
      while (i < n && pos + i < end && buf[pos + i] === key[i]) i++;
      let stop: number;
      if (i === n && pos + n < end && buf[pos + n] === 1) {
        const value = pos + n + 1;
        stop = value;
        while (stop < end && buf[stop] !== 2) stop++;
        if (stop > value) {
          found = value;
          this.valueEnd = stop;
        }
      } else {
        stop = pos + i;
        while (stop < end && buf[stop] !== 2) stop++;
      }
      pos = stop + 1;
    }
    return found;
  }

  decode(start: number, end: number): string {
    return this.buf.toString('utf8', start, end);
  }

  get(name: string): string | undefined {
    const key = propertyKeyBytes(name);
    if (key !== null) {
      const at = this.find(key);
      return at < 0 ? undefined : this.decode(at, this.valueEnd);
    }
    this.decoded ??= this.buf.toString('utf8', this.start, this.end);
    return lastPropertyOf(this.decoded, name);
  }
}

/** A non-TAG subscription's filter (FilterFactory: only SQL92 exists). Throws SqlParseError, or Error for other types. */
export function compileSubscription(sub: SubscriptionData): CompiledFilter {
  if (sub.expressionType !== 'SQL92') throw new Error(`unsupported expression type ${sub.expressionType}; use TAG or SQL92`);
  return compileSql92(sub.subString);
}

export function sqlPropertiesFilter(filter: CompiledFilter): PropertiesFilter {
  return (props) => filter.evaluate(props);
}

/**
 * ExpressionForRetryMessageFilter (broker filterSupportRetry=true): a message of `%RETRY%<group>` is judged by the
 * group's subscription of the topic it came from (property RETRY_TOPIC); TAG, unknown or broken ones pass.
 */
export function retryPropertiesFilter(consumerManager: ConsumerManager, retryTopic: string): PropertiesFilter {
  const group = retryTopic.slice(RETRY_GROUP_TOPIC_PREFIX.length);
  return (props) => {
    const realTopic = props.get(MessageConst.RETRY_TOPIC);
    const sub = realTopic === undefined ? undefined : consumerManager.findSubscriptionData(group, realTopic);
    if (!sub || sub.expressionType === 'TAG') return true;
    let filter: CompiledFilter;
    try {
      filter = compileSubscription(sub);
    } catch {
      return true;
    }
    return filter.evaluate(props);
  };
}

/**
 * The store's filter for a pull (Java ExpressionMessageFilter / ExpressionForRetryMessageFilter): tag hashes on
 * the consume-queue entry, properties on the record; undefined when neither filters anything.
 */
export function pullMessageFilter(
  tagsCodeMatch: ((tagsCode: number) => boolean) | undefined, propertiesFilter: PropertiesFilter | undefined,
): MessageFilter | undefined {
  if (!tagsCodeMatch && !propertiesFilter) return undefined;
  const filter: MessageFilter = {};
  if (tagsCodeMatch) filter.isMatchedByConsumeQueue = tagsCodeMatch;
  if (propertiesFilter) {
    filter.isMatchedByCommitLog = (_record, propertiesString) => propertiesFilter(new PropertiesStringSource(propertiesString));
    const source = new RecordPropertiesSource();
    filter.isMatchedByPropertyBytes = (record, start, end) => propertiesFilter(source.set(record, start, end));
  }
  return filter;
}
