// Broker-side SQL92 filtering of pulled records: Java ExpressionMessageFilter.isMatchedByCommitLog (and
// ExpressionForRetryMessageFilter), applied the way DefaultMessageStore.getMessage applies it — scanning on past
// non-matching messages until the batch is full or the scan budget is spent.
import { MessageConst, parseProperties } from '../../common/message-properties.js';
import { readRecordProperties } from '../../store/record.js';
import type { GetResult, MessageStore, TagsCodeFilter } from '../../store/types.js';
import type { ConsumerManager } from '../client/consumer-manager.js';
import type { SubscriptionData } from '../client/types.js';
import { RETRY_GROUP_TOPIC_PREFIX } from '../topic/topic-config.js';
import { type CompiledFilter, compileSql92 } from './sql92/index.js';

/** Decides from a message's properties whether it is delivered. */
export type PropertiesFilter = (props: Map<string, string>) => boolean;

/**
 * Consume-queue entries one pull may look at while skipping non-matching messages. Java scans
 * max(maxFilterMessageSize = 16000 bytes, maxMsgNums × 20) of consume queue, i.e. 800 entries by default.
 */
export const SQL_FILTER_MAX_SCAN_ENTRIES = 800;

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

/** Whether a stored record passes; a record whose properties cannot be read is delivered rather than lost. */
export function recordMatches(record: Buffer, filter: PropertiesFilter): boolean {
  let propertiesString: string;
  try {
    propertiesString = readRecordProperties(record);
  } catch {
    return true;
  }
  return filter(parseProperties(propertiesString));
}

export interface FilteredGetRequest {
  topic: string;
  queueId: number;
  queueOffset: number;
  maxMsgNums: number;
  maxTotalBytes: number;
  tagsFilter?: TagsCodeFilter;
  filter: PropertiesFilter;
}

/**
 * store.getMessage, keeping only records that pass `filter` and reading on (up to SQL_FILTER_MAX_SCAN_ENTRIES
 * entries) while the batch is not full. When something was scanned but nothing matched, the answer is
 * NO_MATCHED_MESSAGE with nextBeginOffset past the scanned messages (PULL_RETRY_IMMEDIATELY for the client).
 */
export async function getMatchingMessages(store: MessageStore, req: FilteredGetRequest): Promise<GetResult> {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let next = req.queueOffset;
  let scanned = 0;
  let last: GetResult | undefined;
  for (;;) {
    const r = await store.getMessage(
      req.topic, req.queueId, next, req.maxMsgNums - kept.length, req.maxTotalBytes - keptBytes, req.tagsFilter,
    );
    if (r.status !== 'FOUND' && r.status !== 'NO_MATCHED_MESSAGE') {
      if (!last) return r;
      break;
    }
    last = r;
    for (const record of r.records) {
      if (recordMatches(record, req.filter)) {
        kept.push(record);
        keptBytes += record.length;
      }
    }
    if (r.nextBeginOffset <= next) break;
    scanned += r.nextBeginOffset - next;
    next = r.nextBeginOffset;
    if (kept.length >= req.maxMsgNums || keptBytes >= req.maxTotalBytes) break;
    if (scanned >= SQL_FILTER_MAX_SCAN_ENTRIES || next >= r.maxOffset) break;
  }
  return {
    status: kept.length > 0 ? 'FOUND' : 'NO_MATCHED_MESSAGE',
    nextBeginOffset: next,
    minOffset: last.minOffset,
    maxOffset: last.maxOffset,
    records: kept,
    totalBytes: keptBytes,
  };
}
