// Pulling, apart from any transport (Java PullMessageProcessor.processRequest without the Netty parts): the
// permission, group, topic and subscription checks, the filter built from the subscription, the store read and the
// offsets a pull records. The remoting processor decodes the frame into a PullRequest, parks what found nothing
// (long polling) and encodes the outcome.
import { parseProperties } from '../../common/message-properties.js';
import { ResponseCode } from '../../common/response-code.js';
import type { ClientChannel } from '../../remoting/dispatcher.js';
import type { DispatchedEntry, GetResult } from '../../store/index.js';
import type { SubscriptionData } from '../client/types.js';
import { SUB_VERSION_WAIT_MS } from '../client/subscription-version-waits.js';
import { refreshSubscriptionFromClient } from './subscription-refresh.js';
import type { BrokerContext } from '../context.js';
import {
  type PropertiesFilter, compileSubscription, pullMessageFilter, retryPropertiesFilter, sqlPropertiesFilter,
} from '../filter/sql-filter.js';
import type { CompiledFilter } from '../filter/sql92/index.js';
import { buildSubscriptionData, tagsCodeFilter } from '../filter/tag-filter.js';
import { type Refusal, refusal } from '../outcome.js';
import { RETRY_GROUP_TOPIC_PREFIX, isReadable } from '../topic/topic-config.js';

/** PullSysFlag bits (Java: common/sysflag/PullSysFlag.java). */
export const FLAG_COMMIT_OFFSET = 1;
export const FLAG_SUSPEND = 2;
export const FLAG_SUBSCRIPTION = 4;

/** Java caps a pull answer at the in-memory transfer limits; we also keep every frame far below 16 MiB. */
const MAX_PULL_BODY_BYTES = 8 * 1024 * 1024;

/** A pull as every transport supplies it (Java PullMessageRequestHeader). */
export interface PullRequest {
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
  /** `ip:port` of the consumer, named in remarks. */
  peer: string;
  /** The connection the pull came on: the broker may ask its client for a subscription version (subscription-refresh.ts). */
  channel?: ClientChannel;
  /** Set once a pull of cold data was held (Java's _noSuspend_): it is then served, one message, not held again. */
  coldHeld?: boolean;
}

/** A pull consumer's pull of cold data while its group is slowed: hold it COLD_HOLD_MS, then run it again. */
export interface ColdHold {
  coldHold: true;
}

export interface Pulled {
  result: GetResult;
  /** The SQL92 selector, re-checked on arriving messages while a pull that found nothing is parked. */
  sql?: CompiledFilter;
  /** The group's settings the answer's suggestWhichBrokerId comes from (SubscriptionGroupConfig). */
  groupBrokerId: number;
  whichBrokerWhenConsumeSlowly: number;
}

/** A pull's answer: the response code and where the consumer should pull this queue next. */
export interface PullAnswer {
  code: number;
  suggestWhichBrokerId: number;
}

/** Java PullMessageProcessor's GetMessageStatus → response code switch. */
function codeForStatus(result: GetResult, requestOffset: number): number {
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

/**
 * The answer code and suggestWhichBrokerId (Java PullMessageProcessor.composeResponseHeader and the result handler):
 * with slaveReadEnable the group's whichBrokerWhenConsumeSlowly when the consumer is far behind
 * (suggestPullingFromSlave), else the group's brokerId; 0 without. 5.3.3: a broker with brokerId ≠ 0 (a slave, the
 * master's id being the group's lowest) suggests 0 unless the consumer is far behind, and answers anything but
 * FOUND with PULL_RETRY_IMMEDIATELY. On a slave without offsetCheckInSlave, PULL_OFFSET_MOVED becomes
 * PULL_RETRY_IMMEDIATELY with the group's brokerId (the offset is not corrected either; store nextOffsetCorrection).
 */
export function pullAnswer(config: BrokerContext['config'], pull: PullRequest, pulled: Pulled): PullAnswer {
  const { result } = pulled;
  let code = codeForStatus(result, pull.queueOffset);
  let suggest = 0;
  if (config.slaveReadEnable) suggest = result.suggestPullingFromSlave ? pulled.whichBrokerWhenConsumeSlowly : pulled.groupBrokerId;
  if (config.haSemantics === '5.3.3' && config.brokerId !== 0 && !result.suggestPullingFromSlave) {
    suggest = 0;
    if (code !== ResponseCode.SUCCESS) code = ResponseCode.PULL_RETRY_IMMEDIATELY;
  }
  if (code === ResponseCode.PULL_OFFSET_MOVED && config.brokerRole === 'SLAVE' && !config.offsetCheckInSlave) {
    code = ResponseCode.PULL_RETRY_IMMEDIATELY;
    suggest = pulled.groupBrokerId;
  }
  return { code, suggestWhichBrokerId: suggest };
}

/** Which arriving messages wake a parked pull: all, or with a selector those it selects (unknown properties wake). */
export function arrivalFilter(sql: CompiledFilter | undefined): ((entry: DispatchedEntry) => boolean) | undefined {
  if (!sql) return undefined;
  return (e) => e.propertiesString === undefined || sql.evaluate(parseProperties(e.propertiesString));
}

/** Compiles a non-TAG subscription; the error's message when it does not compile. */
function compileOrReason(sub: SubscriptionData): CompiledFilter | string {
  try {
    return compileSubscription(sub);
  } catch (err) {
    return (err as Error).message;
  }
}

/** Java ForbiddenType: why a pull was answered NO_PERMISSION (5.x PullMessageResponseHeader.forbiddenType). */
const enum ForbiddenType { BROKER = 1, GROUP = 2, TOPIC = 3, BROADCASTING_DISABLE = 4, SUBSCRIPTION = 5 }

function forbidden(type: ForbiddenType): Record<string, string> {
  return { forbiddenType: String(type) };
}

/**
 * Checks the pull, reads from the store through the subscription's filter and records the offsets: the pull offset
 * always (5.x pullOffset), the consumer's committed offset only on the first attempt (not when a parked pull is
 * re-run) and never on a slave.
 */
export async function pullMessage(ctx: BrokerContext, pull: PullRequest, firstAttempt: boolean): Promise<Pulled | Refusal | ColdHold> {
  const { config } = ctx;
  if (!isReadable(config.brokerPermission)) {
    return refusal(ResponseCode.NO_PERMISSION, `the broker[${config.brokerIP1}] pulling message is forbidden`, forbidden(ForbiddenType.BROKER));
  }
  const groupConfig = ctx.subscriptionGroupManager.findSubscriptionGroupConfig(pull.consumerGroup);
  if (!groupConfig) {
    return refusal(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, `subscription group [${pull.consumerGroup}] does not exist`);
  }
  if (!groupConfig.consumeEnable) {
    return refusal(ResponseCode.NO_PERMISSION, `subscription group no permission, ${pull.consumerGroup}`, forbidden(ForbiddenType.GROUP));
  }
  const topicConfig = ctx.topicConfigManager.get(pull.topic);
  if (!topicConfig) {
    return refusal(ResponseCode.TOPIC_NOT_EXIST, `topic[${pull.topic}] not exist, apply first please!`);
  }
  if (!isReadable(topicConfig.perm)) {
    return refusal(ResponseCode.NO_PERMISSION, `the topic[${pull.topic}] pulling message is forbidden`, forbidden(ForbiddenType.TOPIC));
  }
  if (pull.queueId < 0 || pull.queueId >= topicConfig.readQueueNums) {
    return refusal(
      ResponseCode.SYSTEM_ERROR,
      `queueId[${pull.queueId}] is illegal, topic:[${pull.topic}] topicConfig.readQueueNums:[${topicConfig.readQueueNums}] consumer:[${pull.peer}]`,
    );
  }

  let subscription: SubscriptionData | undefined;
  let sql: CompiledFilter | undefined;
  // Java PullMessageProcessor: every pull makes its group known (the consumer lag metrics see groups without
  // heartbeats, and groups whose consumers left, through this), with the subscription the pull carries.
  ctx.consumerManager.compensateBasicConsumerInfo(pull.consumerGroup, 'CONSUME_PASSIVELY', 'CLUSTERING');
  if (pull.sysFlag & FLAG_SUBSCRIPTION) {
    subscription = buildSubscriptionData(pull.topic, pull.subscription, pull.expressionType, pull.subVersion);
    ctx.consumerManager.compensateSubscribeData(pull.consumerGroup, pull.topic, subscription);
    if (subscription.expressionType !== 'TAG') {
      const compiled = compileOrReason(subscription);
      if (typeof compiled === 'string') {
        return refusal(ResponseCode.SUBSCRIPTION_PARSE_FAILED, `parse the consumer's subscription failed: ${compiled}`);
      }
      sql = compiled;
    }
  } else {
    const group = ctx.consumerManager.getConsumerGroupInfo(pull.consumerGroup);
    if (!group) {
      return refusal(ResponseCode.SUBSCRIPTION_NOT_EXIST, `the consumer's group info not exist, group: ${pull.consumerGroup}`);
    }
    if (!groupConfig.consumeBroadcastEnable && group.messageModel === 'BROADCASTING') {
      return refusal(
        ResponseCode.NO_PERMISSION, `the consumer group[${pull.consumerGroup}] can not consume by broadcast way`, forbidden(ForbiddenType.BROADCASTING_DISABLE),
      );
    }
    // 5.x UPDATE_AND_GET_GROUP_FORBIDDEN (Java checks it here: for pulls without an inline subscription only).
    if (ctx.subscriptionGroupManager.isReadForbidden(groupConfig.groupName, pull.topic)) {
      return refusal(
        ResponseCode.NO_PERMISSION, `the consumer group[${pull.consumerGroup}] is forbidden for topic[${pull.topic}]`, forbidden(ForbiddenType.SUBSCRIPTION),
      );
    }
    subscription = ctx.consumerManager.findSubscriptionData(pull.consumerGroup, pull.topic);
    if (!subscription) {
      return refusal(ResponseCode.SUBSCRIPTION_NOT_EXIST, `the consumer's subscription not exist, group: ${pull.consumerGroup} topic: ${pull.topic}`);
    }
    if (subscription.subVersion < pull.subVersion) {
      // The heartbeat with this version is usually a few milliseconds behind the pull (subscription-version-waits.ts).
      // When none comes, the client may have skipped it (a stock 5.x client does at start-up): it is asked itself.
      const newer = (await ctx.consumerManager.waitForSubVersion(pull.consumerGroup, pull.topic, pull.subVersion, SUB_VERSION_WAIT_MS))
        ?? (pull.channel && await refreshSubscriptionFromClient(ctx.consumerManager, pull.consumerGroup, pull.topic, pull.subVersion, pull.channel));
      if (!newer) {
        return refusal(ResponseCode.SUBSCRIPTION_NOT_LATEST, `the consumer's subscription not latest, group: ${pull.consumerGroup}`);
      }
      subscription = newer;
    }
    if (subscription.expressionType !== 'TAG') {
      // Java compiles heartbeat subscriptions into ConsumerFilterManager; one that failed has no filter data.
      const compiled = compileOrReason(subscription);
      if (typeof compiled === 'string') {
        return refusal(
          ResponseCode.FILTER_DATA_NOT_EXIST,
          `The broker's consumer filter data is not exist!Your expression may be wrong! (${compiled})`,
        );
      }
      sql = compiled;
    }
  }
  if (subscription.expressionType !== 'TAG' && !config.enablePropertyFilter) {
    return refusal(ResponseCode.SYSTEM_ERROR, `The broker does not support consumer to filter message by ${subscription.expressionType}`);
  }

  let propertiesFilter: PropertiesFilter | undefined;
  if (config.filterSupportRetry && pull.topic.startsWith(RETRY_GROUP_TOPIC_PREFIX)) {
    propertiesFilter = retryPropertiesFilter(ctx.consumerManager, pull.topic);
  } else if (sql) {
    propertiesFilter = sqlPropertiesFilter(sql);
  }

  let maxMsgNums = Math.max(1, Math.min(pull.maxMsgNums, config.maxTransferCountOnMessageInMemory));
  const cold = ctx.coldData;
  if (cold?.groupNeedsFlowControl(pull.consumerGroup)) {
    const commitLogOffset = await ctx.store.getCommitLogOffsetInQueue(pull.topic, pull.queueId, pull.queueOffset);
    if (commitLogOffset >= 0 && cold.isColdArea(commitLogOffset, ctx.store.getMaxPhyOffset())) {
      // Java asks the group's consume type; a group with no heartbeat (Java: a NullPointerException) counts as pull.
      if (ctx.consumerManager.getConsumerGroupInfo(pull.consumerGroup)?.consumeType === 'CONSUME_PASSIVELY') {
        return refusal(ResponseCode.SYSTEM_BUSY, 'This consumer group is reading cold data. It has been flow control');
      }
      if (!pull.coldHeld) return { coldHold: true };
      maxMsgNums = 1;
    }
  }
  const maxTotalBytes = Math.min(config.maxTransferBytesOnMessageInMemory, MAX_PULL_BODY_BYTES);
  const filter = pullMessageFilter(tagsCodeFilter(subscription), propertiesFilter);
  const result = await ctx.store.getMessage(pull.topic, pull.queueId, pull.queueOffset, maxMsgNums, maxTotalBytes, filter);
  if (cold && config.coldDataFlowControlEnable && result.records.length > 0) {
    cold.coldAcc(pull.consumerGroup, cold.coldBytesOf(pull.consumerGroup, result.records, ctx.store.getMaxPhyOffset()));
  }

  // 5.x records every answered pull's next offset (GET_CONSUME_STATS pullOffset), before any suspension
  ctx.consumerOffsetManager.commitPullOffset(pull.consumerGroup, pull.topic, pull.queueId, result.nextBeginOffset);
  // 4.9.8 ignores the commit flag on a slave (storeOffsetEnable); 5.3.3 has no role check (tryCommitOffset).
  const commitHere = config.brokerRole !== 'SLAVE' || config.haSemantics === '5.3.3';
  if (firstAttempt && (pull.sysFlag & FLAG_COMMIT_OFFSET) && commitHere) {
    ctx.consumerOffsetManager.commitOffset(pull.consumerGroup, pull.topic, pull.queueId, pull.commitOffset);
  }

  return {
    result, sql, groupBrokerId: groupConfig.brokerId, whichBrokerWhenConsumeSlowly: groupConfig.whichBrokerWhenConsumeSlowly,
  };
}
