// Broker-side SQL92 filtering: Java ExpressionMessageFilter.isMatchedByCommitLog (and
// ExpressionForRetryMessageFilter), handed to the store's read as a MessageFilter, which applies it while
// scanning (DefaultMessageStore.getMessage).
import { MessageConst, lastPropertyOf } from '../../common/message-properties.js';
import type { MessageFilter } from '../../store/index.js';
import type { ConsumerManager } from '../client/consumer-manager.js';
import type { SubscriptionData } from '../client/types.js';
import { RETRY_GROUP_TOPIC_PREFIX } from '../topic/topic-config.js';
import { type CompiledFilter, type PropertySource, compileSql92 } from './sql92/index.js';

/** Decides from a message's properties whether it is delivered. */
export type PropertiesFilter = (props: PropertySource) => boolean;

/** A record's properties as parseProperties would map them, each read from the string when asked for. */
class PropertiesStringSource implements PropertySource {
  constructor(private readonly propertiesString: string) {}
  get(name: string): string | undefined {
    return lastPropertyOf(this.propertiesString, name);
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
  if (propertiesFilter) filter.isMatchedByCommitLog = (_record, propertiesString) => propertiesFilter(new PropertiesStringSource(propertiesString));
  return filter;
}
