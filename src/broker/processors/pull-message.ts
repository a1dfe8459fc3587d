import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { HeaderReader, type RemotingCommand, createResponse } from '../../remoting/command.js';
import type { ProcessorTable, RequestContext } from '../../remoting/dispatcher.js';
import { parseProperties } from '../../common/message-properties.js';
import type { DispatchedEntry, GetResult } from '../../store/index.js';
import type { SubscriptionData } from '../client/types.js';
import type { BrokerContext } from '../context.js';
import {
  type PropertiesFilter, compileSubscription, pullMessageFilter, retryPropertiesFilter, sqlPropertiesFilter,
} from '../filter/sql-filter.js';
import type { CompiledFilter } from '../filter/sql92/index.js';
import { buildSubscriptionData, tagsCodeFilter } from '../filter/tag-filter.js';
import { RETRY_GROUP_TOPIC_PREFIX, isReadable } from '../topic/topic-config.js';

/** PullSysFlag bits (Java: common/sysflag/PullSysFlag.java). */
const FLAG_COMMIT_OFFSET = 1;
const FLAG_SUSPEND = 2;
const FLAG_SUBSCRIPTION = 4;

/** Java caps a pull answer at the in-memory transfer limits; we also keep every frame far below 16 MiB. */
const MAX_PULL_BODY_BYTES = 8 * 1024 * 1024;

/** What a pull filters on besides tag codes (Java MessageFilter.isMatchedByCommitLog). */
interface PullFilter {
  /** Applied to each record's properties. */
  filter: PropertiesFilter;
  /** The SQL92 selector itself, re-checked on arriving messages while the pull is parked. */
  sql?: CompiledFilter;
}

interface PullRequest {
  consumerGroup: string;
  topic: string;
  queueId: number;
  queueOffset: number;
  maxMsgNums: number;
  sysFlag: number;
  commitOffset: number;
  suspendTimeoutMillis: number;
  subscription?: string;
  subVersion: number;
  expressionType?: string;
}

function readPullHeader(req: RemotingCommand): PullRequest {
  const h = new HeaderReader(req.extFields);
  return {
    consumerGroup: h.str('consumerGroup'),
    topic: h.str('topic'),
    queueId: h.int('queueId'),
    queueOffset: h.long('queueOffset'),
    maxMsgNums: h.int('maxMsgNums'),
    sysFlag: h.int('sysFlag'),
    commitOffset: h.optLong('commitOffset', 0) ?? 0,
    suspendTimeoutMillis: h.optLong('suspendTimeoutMillis', 15000) ?? 15000,
    subscription: h.optStr('subscription'),
    subVersion: h.optLong('subVersion', 0) ?? 0,
    expressionType: h.optStr('expressionType'),
  };
}

/** Java PullMessageProcessor: PULL_MESSAGE (11) and LITE_PULL_MESSAGE (361), with long polling. */
export function pullMessageProcessors(ctx: BrokerContext): ProcessorTable {
  const processor = (req: RemotingCommand, rc: RequestContext) => {
    const pull = readPullHeader(req);
    return new Promise<RemotingCommand | null>((resolve, reject) => {
      const rerun = () => execute(ctx, pull, rc, false).then((r) => resolve(r instanceof Suspend ? null : r), reject);
      execute(ctx, pull, rc, true).then((res) => {
        if (!(res instanceof Suspend)) {
          resolve(res);
          return;
        }
        const timeoutMs = ctx.config.longPollingEnable ? pull.suspendTimeoutMillis : ctx.config.shortPollingTimeMills;
        const parked = ctx.pullRequestHoldService.hold(pull.topic, pull.queueId, pull.queueOffset, timeoutMs, () => {
          if (rc.channel.isClosed) {
            resolve(null);
            return;
          }
          rerun();
        }, res.arrivalFilter());
        if (!parked) rerun();
      }, reject);
    });
  };
  return [
    [RequestCode.PULL_MESSAGE, processor],
    [RequestCode.LITE_PULL_MESSAGE, processor],
  ];
}

/** "Park this pull" (PULL_NOT_FOUND with suspension allowed), with the SQL92 filter to check arrivals against. */
class Suspend {
  constructor(private readonly sql: CompiledFilter | undefined) {}

  /** Which arriving messages wake the pull: all, or with a selector those it selects (unknown properties wake). */
  arrivalFilter(): ((entry: DispatchedEntry) => boolean) | undefined {
    const sql = this.sql;
    if (!sql) return undefined;
    return (e) => e.propertiesString === undefined || sql.evaluate(parseProperties(e.propertiesString));
  }
}

/** Compiles a non-TAG subscription; the error's message when it does not compile. */
function compileOrReason(sub: SubscriptionData): CompiledFilter | string {
  try {
    return compileSubscription(sub);
  } catch (err) {
    return (err as Error).message;
  }
}

async function execute(
  ctx: BrokerContext,
  pull: PullRequest,
  rc: RequestContext,
  brokerAllowSuspend: boolean,
): Promise<RemotingCommand | Suspend> {
  const { config } = ctx;
  if (!isReadable(config.brokerPermission)) {
    return createResponse(ResponseCode.NO_PERMISSION, `the broker[${config.brokerIP1}] pulling message is forbidden`);
  }
  const groupConfig = ctx.subscriptionGroupManager.findSubscriptionGroupConfig(pull.consumerGroup);
  if (!groupConfig) {
    return createResponse(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, `subscription group [${pull.consumerGroup}] does not exist`);
  }
  if (!groupConfig.consumeEnable) {
    return createResponse(ResponseCode.NO_PERMISSION, `subscription group no permission, ${pull.consumerGroup}`);
  }
  const topicConfig = ctx.topicConfigManager.get(pull.topic);
  if (!topicConfig) {
    return createResponse(ResponseCode.TOPIC_NOT_EXIST, `topic[${pull.topic}] not exist, apply first please!`);
  }
  if (!isReadable(topicConfig.perm)) {
    return createResponse(ResponseCode.NO_PERMISSION, `the topic[${pull.topic}] pulling message is forbidden`);
  }
  if (pull.queueId < 0 || pull.queueId >= topicConfig.readQueueNums) {
    return createResponse(
      ResponseCode.SYSTEM_ERROR,
      `queueId[${pull.queueId}] is illegal, topic:[${pull.topic}] topicConfig.readQueueNums:[${topicConfig.readQueueNums}] consumer:[${rc.channel.remoteAddress}]`,
    );
  }

  let subscription: SubscriptionData | undefined;
  let sql: CompiledFilter | undefined;
  if (pull.sysFlag & FLAG_SUBSCRIPTION) {
    subscription = buildSubscriptionData(pull.topic, pull.subscription, pull.expressionType, pull.subVersion);
    if (subscription.expressionType !== 'TAG') {
      const compiled = compileOrReason(subscription);
      if (typeof compiled === 'string') {
        return createResponse(ResponseCode.SUBSCRIPTION_PARSE_FAILED, `parse the consumer's subscription failed: ${compiled}`);
      }
      sql = compiled;
    }
  } else {
    const group = ctx.consumerManager.getConsumerGroupInfo(pull.consumerGroup);
    if (!group) {
      return createResponse(ResponseCode.SUBSCRIPTION_NOT_EXIST, `the consumer's group info not exist, group: ${pull.consumerGroup}`);
    }
    if (!groupConfig.consumeBroadcastEnable && group.messageModel === 'BROADCASTING') {
      return createResponse(ResponseCode.NO_PERMISSION, `the consumer group[${pull.consumerGroup}] can not consume by broadcast way`);
    }
    subscription = ctx.consumerManager.findSubscriptionData(pull.consumerGroup, pull.topic);
    if (!subscription) {
      return createResponse(ResponseCode.SUBSCRIPTION_NOT_EXIST, `the consumer's subscription not exist, group: ${pull.consumerGroup} topic: ${pull.topic}`);
    }
    if (subscription.subVersion < pull.subVersion) {
      return createResponse(ResponseCode.SUBSCRIPTION_NOT_LATEST, `the consumer's subscription not latest, group: ${pull.consumerGroup}`);
    }
    if (subscription.expressionType !== 'TAG') {
      // Java compiles heartbeat subscriptions into ConsumerFilterManager; one that failed has no filter data.
      const compiled = compileOrReason(subscription);
      if (typeof compiled === 'string') {
        return createResponse(
          ResponseCode.FILTER_DATA_NOT_EXIST,
          `The broker's consumer filter data is not exist!Your expression may be wrong! (${compiled})`,
        );
      }
      sql = compiled;
    }
  }
  if (subscription.expressionType !== 'TAG' && !config.enablePropertyFilter) {
    return createResponse(ResponseCode.SYSTEM_ERROR, `The broker does not support consumer to filter message by ${subscription.expressionType}`);
  }

  let recordFilter: PullFilter | undefined;
  if (config.filterSupportRetry && pull.topic.startsWith(RETRY_GROUP_TOPIC_PREFIX)) {
    recordFilter = { filter: retryPropertiesFilter(ctx.consumerManager, pull.topic) };
  } else if (sql) {
    recordFilter = { filter: sqlPropertiesFilter(sql), sql };
  }

  const maxMsgNums = Math.max(1, Math.min(pull.maxMsgNums, config.maxTransferCountOnMessageInMemory));
  const maxTotalBytes = Math.min(config.maxTransferBytesOnMessageInMemory, MAX_PULL_BODY_BYTES);
  const filter = pullMessageFilter(tagsCodeFilter(subscription), recordFilter?.filter);
  const result = await ctx.store.getMessage(pull.topic, pull.queueId, pull.queueOffset, maxMsgNums, maxTotalBytes, filter);

  // 5.x records every answered pull's next offset (GET_CONSUME_STATS pullOffset), before any suspension
  ctx.consumerOffsetManager.commitPullOffset(pull.consumerGroup, pull.topic, pull.queueId, result.nextBeginOffset);
  if (brokerAllowSuspend && (pull.sysFlag & FLAG_COMMIT_OFFSET) && config.brokerRole !== 'SLAVE') {
    ctx.consumerOffsetManager.commitOffset(pull.consumerGroup, pull.topic, pull.queueId, pull.commitOffset);
  }

  const code = responseCodeFor(result, pull.queueOffset);
  if (code === ResponseCode.PULL_NOT_FOUND && brokerAllowSuspend && (pull.sysFlag & FLAG_SUSPEND)) {
    return new Suspend(recordFilter?.sql);
  }
  const res = createResponse(code, remarkFor(result), {
    suggestWhichBrokerId: '0',
    nextBeginOffset: String(result.nextBeginOffset),
    minOffset: String(result.minOffset),
    maxOffset: String(result.maxOffset),
  });
  if (code === ResponseCode.SUCCESS) {
    res.bodyParts = result.records;
    ctx.stats.msgGetTotal += result.records.length;
  }
  return res;
}

/** Java PullMessageProcessor's GetMessageStatus → response code switch (master behaviour). */
function responseCodeFor(result: GetResult, requestOffset: number): number {
  switch (result.status) {
    case 'FOUND':
      return ResponseCode.SUCCESS;
    case 'MESSAGE_WAS_REMOVING':
    case 'NO_MATCHED_MESSAGE':
      return ResponseCode.PULL_RETRY_IMMEDIATELY;
    case 'NO_MATCHED_LOGIC_QUEUE':
    case 'NO_MESSAGE_IN_QUEUE':
      return requestOffset !== 0 ? ResponseCode.PULL_OFFSET_MOVED : ResponseCode.PULL_NOT_FOUND;
    case 'OFFSET_FOUND_NULL':
    case 'OFFSET_OVERFLOW_ONE':
      return ResponseCode.PULL_NOT_FOUND;
    case 'OFFSET_OVERFLOW_BADLY':
    case 'OFFSET_TOO_SMALL':
      return ResponseCode.PULL_OFFSET_MOVED;
    default:
      return ResponseCode.SYSTEM_ERROR;
  }
}

function remarkFor(result: GetResult): string | undefined {
  return result.status === 'FOUND' ? undefined : result.status;
}
