import os from 'node:os';
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { HeaderReader, type RemotingCommand, createResponse } from '../../remoting/command.js';
import type { ProcessorTable } from '../../remoting/dispatcher.js';
import type { BrokerContext } from '../context.js';

/** Java: messages within this share of RAM behind the log end count as "still in memory". */
const ACCESS_MESSAGE_IN_MEMORY_MAX_RATIO = 0.4;

/**
 * Offsets: QUERY_CONSUMER_OFFSET (14), UPDATE_CONSUMER_OFFSET (15), SEARCH_OFFSET_BY_TIMESTAMP (29),
 * GET_MAX_OFFSET (30), GET_MIN_OFFSET (31), GET_EARLIEST_MSG_STORETIME (32). Java ConsumerManageProcessor and
 * AdminBrokerProcessor.
 */
export function consumerOffsetProcessors(ctx: BrokerContext): ProcessorTable {
  return [
    [RequestCode.QUERY_CONSUMER_OFFSET, (req) => queryConsumerOffset(ctx, req)],
    [RequestCode.UPDATE_CONSUMER_OFFSET, (req) => {
      const h = new HeaderReader(req.extFields);
      const group = h.str('consumerGroup');
      const topic = h.str('topic');
      const queueId = h.int('queueId');
      const offset = h.long('commitOffset');
      // 5.x (since 5.3.0, apache/rocketmq#7964; 5.3.3 answers so): the group must exist, checked before the topic.
      // Queue ids are not checked (5.3.3 stores an offset for queue -1 or 99 of a 4-queue topic too).
      if (!ctx.subscriptionGroupManager.get(group)) {
        return createResponse(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, `Group ${group} not exist!`);
      }
      if (!ctx.topicConfigManager.get(topic)) {
        return createResponse(ResponseCode.TOPIC_NOT_EXIST, `Topic ${topic} not exist!`);
      }
      ctx.consumerOffsetManager.commitOffset(group, topic, queueId, offset);
      return createResponse(ResponseCode.SUCCESS);
    }],
    [RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, async (req) => {
      const h = new HeaderReader(req.extFields);
      const offset = await ctx.store.getOffsetInQueueByTime(h.str('topic'), h.int('queueId'), h.long('timestamp'));
      return createResponse(ResponseCode.SUCCESS, undefined, { offset: String(offset) });
    }],
    [RequestCode.GET_MAX_OFFSET, (req) => {
      const h = new HeaderReader(req.extFields);
      return createResponse(ResponseCode.SUCCESS, undefined, { offset: String(ctx.store.getMaxOffsetInQueue(h.str('topic'), h.int('queueId'))) });
    }],
    [RequestCode.GET_MIN_OFFSET, (req) => {
      const h = new HeaderReader(req.extFields);
      return createResponse(ResponseCode.SUCCESS, undefined, { offset: String(ctx.store.getMinOffsetInQueue(h.str('topic'), h.int('queueId'))) });
    }],
    [RequestCode.GET_EARLIEST_MSG_STORETIME, async (req) => {
      const h = new HeaderReader(req.extFields);
      const ts = await ctx.store.getEarliestMessageTime(h.str('topic'), h.int('queueId'));
      return createResponse(ResponseCode.SUCCESS, undefined, { timestamp: String(ts) });
    }],
    [RequestCode.VIEW_MESSAGE_BY_ID, async (req) => {
      const h = new HeaderReader(req.extFields);
      const offset = h.long('offset');
      const record = await ctx.store.lookMessageByOffset(offset);
      if (!record) return createResponse(ResponseCode.SYSTEM_ERROR, `can not find message by the offset, ${offset}`);
      return createResponse(ResponseCode.SUCCESS, undefined, {}, record);
    }],
  ];
}

async function queryConsumerOffset(ctx: BrokerContext, req: RemotingCommand): Promise<RemotingCommand> {
  const h = new HeaderReader(req.extFields);
  const group = h.str('consumerGroup');
  const topic = h.str('topic');
  const queueId = h.int('queueId');
  const setZeroIfNotFound = h.bool('setZeroIfNotFound', true);
  const stored = ctx.consumerOffsetManager.queryOffset(group, topic, queueId);
  if (stored >= 0) return createResponse(ResponseCode.SUCCESS, undefined, { offset: String(stored) });
  // Java: a group with no offset on a queue whose first message is still in memory starts at 0.
  const minOffset = ctx.store.getMinOffsetInQueue(topic, queueId);
  if (setZeroIfNotFound && minOffset <= 0 && !(await isInDisk(ctx, topic, queueId, 0))) {
    return createResponse(ResponseCode.SUCCESS, undefined, { offset: '0' });
  }
  return createResponse(ResponseCode.QUERY_NOT_FOUND, 'Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first');
}

/** Java DefaultMessageStore.checkInDiskByConsumeOffset. */
async function isInDisk(ctx: BrokerContext, topic: string, queueId: number, queueOffset: number): Promise<boolean> {
  const phy = await ctx.store.getCommitLogOffsetInQueue(topic, queueId, queueOffset);
  if (phy < 0) return false;
  const memory = os.totalmem() * ACCESS_MESSAGE_IN_MEMORY_MAX_RATIO;
  return ctx.store.getMaxPhyOffset() - phy > memory;
}
