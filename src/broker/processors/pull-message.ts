import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { HeaderReader, type RemotingCommand, createResponse } from '../../remoting/command.js';
import type { RemotingServer, RequestContext } from '../../remoting/server.js';
import type { GetResult } from '../../store/types.js';
import type { SubscriptionData } from '../client/types.js';
import type { BrokerContext } from '../context.js';
import { buildSubscriptionData, tagsCodeFilter } from '../filter/tag-filter.js';
import { isReadable } from '../topic/topic-config.js';

/** PullSysFlag bits (Java: common/sysflag/PullSysFlag.java). */
const FLAG_COMMIT_OFFSET = 1;
const FLAG_SUSPEND = 2;
const FLAG_SUBSCRIPTION = 4;

/** Java caps a pull answer at the in-memory transfer limits; we also keep every frame far below 16 MiB. */
const MAX_PULL_BODY_BYTES = 8 * 1024 * 1024;

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
export function registerPullMessageProcessor(server: RemotingServer, ctx: BrokerContext): void {
  const processor = (req: RemotingCommand, rc: RequestContext) => {
    const pull = readPullHeader(req);
    return new Promise<RemotingCommand | null>((resolve, reject) => {
      execute(ctx, pull, rc, true).then((res) => {
        if (res !== 'suspend') {
          resolve(res);
          return;
        }
        const timeoutMs = ctx.config.longPollingEnable ? pull.suspendTimeoutMillis : ctx.config.shortPollingTimeMills;
        const parked = ctx.pullRequestHoldService.hold(pull.topic, pull.queueId, pull.queueOffset, timeoutMs, () => {
          if (rc.connection.isClosed) {
            resolve(null);
            return;
          }
          execute(ctx, pull, rc, false).then((r) => resolve(r === 'suspend' ? null : r), reject);
        });
        if (!parked) execute(ctx, pull, rc, false).then((r) => resolve(r === 'suspend' ? null : r), reject);
      }, reject);
    });
  };
  server.register(RequestCode.PULL_MESSAGE, processor);
  server.register(RequestCode.LITE_PULL_MESSAGE, processor);
}

async function execute(
  ctx: BrokerContext,
  pull: PullRequest,
  rc: RequestContext,
  brokerAllowSuspend: boolean,
): Promise<RemotingCommand | 'suspend'> {
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
      `queueId[${pull.queueId}] is illegal, topic:[${pull.topic}] topicConfig.readQueueNums:[${topicConfig.readQueueNums}] consumer:[${rc.connection.remoteAddress}]`,
    );
  }

  let subscription: SubscriptionData | undefined;
  if (pull.sysFlag & FLAG_SUBSCRIPTION) {
    subscription = buildSubscriptionData(pull.topic, pull.subscription, pull.expressionType, pull.subVersion);
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
  }
  if (subscription.expressionType !== 'TAG' && !config.enablePropertyFilter) {
    return createResponse(ResponseCode.SYSTEM_ERROR, `The broker does not support consumer to filter message by ${subscription.expressionType}`);
  }

  const maxMsgNums = Math.max(1, Math.min(pull.maxMsgNums, config.maxTransferCountOnMessageInMemory));
  const result = await ctx.store.getMessage(
    pull.topic,
    pull.queueId,
    pull.queueOffset,
    maxMsgNums,
    Math.min(config.maxTransferBytesOnMessageInMemory, MAX_PULL_BODY_BYTES),
    tagsCodeFilter(subscription),
  );

  if (brokerAllowSuspend && (pull.sysFlag & FLAG_COMMIT_OFFSET) && config.brokerRole !== 'SLAVE') {
    ctx.consumerOffsetManager.commitOffset(pull.consumerGroup, pull.topic, pull.queueId, pull.commitOffset);
  }

  const code = responseCodeFor(result, pull.queueOffset);
  if (code === ResponseCode.PULL_NOT_FOUND && brokerAllowSuspend && (pull.sysFlag & FLAG_SUSPEND)) {
    return 'suspend';
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
