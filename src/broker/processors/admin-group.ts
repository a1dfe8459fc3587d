// Group administration and consumer/producer views: UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (200),
// GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201), DELETE_SUBSCRIPTIONGROUP (207), GET_SUBSCRIPTIONGROUP_CONFIG (352),
// GET_CONSUME_STATS (208), GET_CONSUMER_CONNECTION_LIST (203), GET_PRODUCER_CONNECTION_LIST (204),
// GET_ALL_CONSUMER_OFFSET (43), QUERY_TOPICS_BY_CONSUMER (343), GET_BROKER_CONSUME_STATS (317),
// UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST (225), GET_ALL_PRODUCER_INFO (328), UPDATE_AND_GET_GROUP_FORBIDDEN (353).
// Java: broker/processor/AdminBrokerProcessor.java (4.9.x and 5.x).
import { JavaDouble, stringifyFastjson } from '../../common/fastjson.js';
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { HeaderReader, type RemotingCommand, createResponse } from '../../remoting/command.js';
import type { ProcessorTable } from '../../remoting/dispatcher.js';
import type { ClientChannelInfo, MessageQueue } from '../client/types.js';
import type { BrokerContext } from '../context.js';
import {
  encodeSubscriptionGroupConfig,
  parseSubscriptionGroupConfig,
  validateGroupName,
} from '../subscription/subscription-group-manager.js';
import { Turns, encodeMessageQueueTableInTurns } from './queue-tables.js';
import { parseJsonBody, withBodyErrors } from './client-manage.js';

const body = (text: string): Buffer => Buffer.from(text);

/** Java body.Connection, fields in fastjson's order. */
function connectionJson(ch: ClientChannelInfo): Record<string, unknown> {
  return { clientAddr: ch.channel.remoteAddress, clientId: ch.clientId, language: ch.language, version: ch.version };
}

function updateAndCreateSubscriptionGroup(ctx: BrokerContext, req: RemotingCommand): RemotingCommand {
  const raw = parseJsonBody(req, 'UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (a SubscriptionGroupConfig JSON body is required)');
  let cfg;
  try {
    cfg = parseSubscriptionGroupConfig(raw);
  } catch (err) {
    return createResponse(ResponseCode.INVALID_PARAMETER, `subscription group config: ${(err as Error).message}`);
  }
  const invalid = validateGroupName(cfg.groupName);
  if (invalid) return createResponse(ResponseCode.INVALID_PARAMETER, invalid);
  ctx.subscriptionGroupManager.updateSubscriptionGroupConfig(cfg);
  return createResponse(ResponseCode.SUCCESS);
}

/** Groups one UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST may carry (Java has no limit). */
const MAX_GROUPS_PER_LIST = 10_000;

/**
 * 5.x UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST (225, mqadmin updateSubGroupList): a body
 * `{"groupConfigList":[SubscriptionGroupConfig...]}`; every entry is checked first, then all are applied, or none.
 */
function updateAndCreateSubscriptionGroupList(ctx: BrokerContext, req: RemotingCommand): RemotingCommand {
  const raw = parseJsonBody(req, 'UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST (a {"groupConfigList":[...]} body is required)') as Record<string, unknown> | null;
  const list = raw?.groupConfigList;
  if (!Array.isArray(list)) return createResponse(ResponseCode.INVALID_PARAMETER, 'UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST: groupConfigList is not a list');
  if (list.length > MAX_GROUPS_PER_LIST) {
    return createResponse(ResponseCode.INVALID_PARAMETER, `UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST: ${list.length} groups, at most ${MAX_GROUPS_PER_LIST} a request`);
  }
  const configs = [];
  for (const entry of list) {
    let cfg;
    try {
      cfg = parseSubscriptionGroupConfig(entry);
    } catch (err) {
      return createResponse(ResponseCode.INVALID_PARAMETER, `subscription group config: ${(err as Error).message}`);
    }
    const invalid = validateGroupName(cfg.groupName);
    if (invalid) return createResponse(ResponseCode.INVALID_PARAMETER, invalid);
    configs.push(cfg);
  }
  for (const cfg of configs) ctx.subscriptionGroupManager.updateSubscriptionGroupConfig(cfg);
  return createResponse(ResponseCode.SUCCESS);
}

function getAllSubscriptionGroup(ctx: BrokerContext): RemotingCommand {
  const sgm = ctx.subscriptionGroupManager;
  return createResponse(ResponseCode.SUCCESS, undefined, { totalGroupNum: String(sgm.table.size) }, body(sgm.encode()));
}

function deleteSubscriptionGroup(ctx: BrokerContext, req: RemotingCommand): RemotingCommand {
  const h = new HeaderReader(req.extFields);
  const group = h.str('groupName');
  // 5.x calls the flag cleanOffset, 4.9.x removeOffset.
  const cleanOffset = h.bool('cleanOffset', false) || h.bool('removeOffset', false);
  ctx.subscriptionGroupManager.deleteSubscriptionGroupConfig(group);
  if (cleanOffset) {
    ctx.consumerOffsetManager.removeGroup(group);
    ctx.popInflight?.clearGroup(group);
  }
  return createResponse(ResponseCode.SUCCESS);
}

function getSubscriptionGroupConfig(ctx: BrokerContext, req: RemotingCommand): RemotingCommand {
  const group = new HeaderReader(req.extFields).str('group');
  // Java looks up with auto-creation, so with autoCreateSubscriptionGroup=true any valid name "exists".
  const cfg = ctx.subscriptionGroupManager.findSubscriptionGroupConfig(group);
  if (!cfg) return createResponse(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, `No group in this broker: ${group}`);
  return createResponse(ResponseCode.SUCCESS, undefined, {}, body(encodeSubscriptionGroupConfig(cfg)));
}

/**
 * Topics GET_CONSUME_STATS reports (Java 5.x getTopicsForCollectingConsumeStats): an explicit `topicList`
 * (`;`-separated) as given; otherwise the topic, or every topic the group has offsets for, minus topics the
 * online group does not subscribe.
 */
function consumeStatsTopics(ctx: BrokerContext, group: string, topic: string | undefined, topicList: string | undefined): string[] {
  const listed = (topicList ?? '').split(';').filter((t) => t.trim() !== '');
  if (listed.length > 0) return [...new Set(listed)];
  const topics = topic && topic.trim() !== '' ? [topic] : ctx.consumerOffsetManager.whichTopicByGroup(group);
  const subscribed = ctx.consumerManager.findSubscriptionDataCount(group);
  return topics.filter((t) => subscribed === 0 || ctx.consumerManager.findSubscriptionData(group, t) !== undefined);
}

/** Java OffsetWrapper of a group's queue, as GET_CONSUME_STATS and GET_BROKER_CONSUME_STATS report it. */
interface OffsetWrapper {
  brokerOffset: number;
  consumerOffset: number;
  lastTimestamp: number;
  pullOffset: number;
}

async function offsetWrapper(ctx: BrokerContext, group: string, topic: string, queueId: number): Promise<OffsetWrapper> {
  const brokerOffset = Math.max(0, ctx.store.getMaxOffsetInQueue(topic, queueId));
  // Java reports 0 when the group never committed (mqadmin shows the whole queue as lag).
  const consumerOffset = Math.max(0, ctx.consumerOffsetManager.queryOffset(group, topic, queueId));
  let lastTimestamp = 0;
  if (consumerOffset > 0) {
    const ts = await ctx.store.getMessageStoreTimestamp(topic, queueId, consumerOffset - 1);
    if (ts > 0) lastTimestamp = ts;
  }
  // pullOffset (5.x): the group's latest pull position, never below the committed offset
  const pullOffset = Math.max(consumerOffset, ctx.consumerOffsetManager.queryPullOffset(group, topic, queueId));
  return { brokerOffset, consumerOffset, lastTimestamp, pullOffset };
}

async function getConsumeStats(ctx: BrokerContext, req: RemotingCommand): Promise<RemotingCommand> {
  const h = new HeaderReader(req.extFields);
  const group = h.str('consumerGroup');
  const entries: Array<[MessageQueue, OffsetWrapper]> = [];
  const turns = new Turns();
  for (const topic of consumeStatsTopics(ctx, group, h.optStr('topic'), h.optStr('topicList'))) {
    const tc = ctx.topicConfigManager.get(topic);
    if (!tc) continue;
    for (let queueId = 0; queueId < tc.readQueueNums; queueId++) {
      await turns.done();
      entries.push([{ brokerName: ctx.config.brokerName, queueId, topic }, await offsetWrapper(ctx, group, topic, queueId)]);
    }
  }
  const text = await encodeMessageQueueTableInTurns(entries, { consumeTps: new JavaDouble(0) });
  return createResponse(ResponseCode.SUCCESS, undefined, {}, body(text));
}

/**
 * Java fetchAllConsumeStatsInBroker (GET_BROKER_CONSUME_STATS, mqadmin brokerConsumeStats): ConsumeStats of every
 * subscription group for each topic it has offsets for (write queues; with isOrder only order topics), skipping
 * topics an online group does not subscribe. pullOffset is the group's pull position as in GET_CONSUME_STATS (Java
 * leaves it 0 here, which makes its totalInflightDiff minus the sum of the consumer offsets).
 *
 * The answer can be large (4 groups with offsets on 2,000 topics of 8 queues: 64,000 entries, 9.2 MB), so it is
 * written one topic at a time and the event loop gets a turn every QUEUES_PER_TURN entries (queue-tables.ts; within
 * a topic too, which may have 16,384 queues): built in one piece, it held the loop 0.5 s (warm) to 0.6 s (after a
 * restart); the text is the same byte for byte.
 */
async function getBrokerConsumeStats(ctx: BrokerContext, req: RemotingCommand): Promise<RemotingCommand> {
  const isOrder = new HeaderReader(req.extFields).bool('isOrder');
  const { consumerOffsetManager: offsets, consumerManager } = ctx;
  const groupsJson: string[] = [];
  let totalDiff = 0;
  let totalInflightDiff = 0;
  const turns = new Turns();
  for (const group of [...ctx.subscriptionGroupManager.table.keys()]) {
    const statsOfGroup: string[] = [];
    for (const topic of offsets.whichTopicByGroup(group)) {
      const tc = ctx.topicConfigManager.get(topic);
      if (!tc || (isOrder && !tc.order)) continue;
      if (!consumerManager.findSubscriptionData(group, topic) && consumerManager.findSubscriptionDataCount(group) > 0) continue;
      const entries: Array<[MessageQueue, OffsetWrapper]> = [];
      for (let queueId = 0; queueId < tc.writeQueueNums; queueId++) {
        await turns.done();
        const w = await offsetWrapper(ctx, group, topic, queueId);
        totalDiff += w.brokerOffset - w.consumerOffset;
        totalInflightDiff += w.pullOffset - w.consumerOffset;
        entries.push([{ brokerName: ctx.config.brokerName, queueId, topic }, w]);
      }
      statsOfGroup.push(await encodeMessageQueueTableInTurns(entries, { consumeTps: new JavaDouble(0) }));
      await turns.done(entries.length);
    }
    groupsJson.push(`{${stringifyFastjson(group)}:[${statsOfGroup.join(',')}]}`);
  }
  // fastjson's key order (sorted), as stringifyFastjson writes the whole object
  const text = `{"brokerAddr":${stringifyFastjson(ctx.brokerAddr())},"consumeStatsList":[${groupsJson.join(',')}],` +
    `"totalDiff":${totalDiff},"totalInflightDiff":${totalInflightDiff}}`;
  return createResponse(ResponseCode.SUCCESS, undefined, {}, body(text));
}

function getConsumerConnectionList(ctx: BrokerContext, req: RemotingCommand): RemotingCommand {
  const group = new HeaderReader(req.extFields).str('consumerGroup');
  const info = ctx.consumerManager.getConsumerGroupInfo(group);
  if (!info || info.channels.size === 0) {
    return createResponse(ResponseCode.CONSUMER_NOT_ONLINE, `the consumer group[${group}] not online`);
  }
  const connection = {
    connectionSet: [...info.channels.values()].map(connectionJson),
    consumeFromWhere: info.consumeFromWhere,
    consumeType: info.consumeType,
    messageModel: info.messageModel,
    subscriptionTable: Object.fromEntries(info.subscriptions),
  };
  return createResponse(ResponseCode.SUCCESS, undefined, {}, body(stringifyFastjson(connection)));
}

function getProducerConnectionList(ctx: BrokerContext, req: RemotingCommand): RemotingCommand {
  const group = new HeaderReader(req.extFields).str('producerGroup');
  const channels = ctx.producerManager.getGroupChannels(group);
  if (!channels) return createResponse(ResponseCode.SYSTEM_ERROR, `the producer group[${group}] not exist`);
  return createResponse(ResponseCode.SUCCESS, undefined, {}, body(stringifyFastjson({ connectionSet: [...channels.values()].map(connectionJson) })));
}

/** GET_ALL_PRODUCER_INFO (328, mqadmin producer): Java ProducerManager.getProducerTable, every group's producers. */
function getAllProducerInfo(ctx: BrokerContext): RemotingCommand {
  const data: Record<string, unknown[]> = {};
  for (const group of ctx.producerManager.groupNames()) {
    const channels = ctx.producerManager.getGroupChannels(group);
    if (!channels) continue;
    data[group] = [...channels.values()].map((ch) => ({
      clientId: ch.clientId,
      language: ch.language,
      lastUpdateTimestamp: ch.lastUpdateTimestamp,
      // Java: the channel's InetSocketAddress.toString()
      remoteIP: `/${ch.channel.remoteAddress}`,
      version: ch.version,
    }));
  }
  return createResponse(ResponseCode.SUCCESS, undefined, {}, body(stringifyFastjson({ data })));
}

function getAllConsumerOffset(ctx: BrokerContext): RemotingCommand {
  // Java's ConsumerOffsetManager.encode(): `{"offsetTable":{"t@g":{0:5}}}` with bare int keys.
  return createResponse(ResponseCode.SUCCESS, undefined, {}, body(ctx.consumerOffsetManager.encode()));
}

function queryTopicsByConsumer(ctx: BrokerContext, req: RemotingCommand): RemotingCommand {
  const group = new HeaderReader(req.extFields).str('group');
  const topicList = { brokerAddr: ctx.brokerAddr(), topicList: ctx.consumerOffsetManager.whichTopicByGroup(group) };
  return createResponse(ResponseCode.SUCCESS, undefined, {}, body(stringifyFastjson(topicList)));
}

/**
 * 5.x UPDATE_AND_GET_GROUP_FORBIDDEN (353, MQAdminExt.updateAndGetGroupReadForbidden): with `readable` set, the
 * group's pulls of the topic are refused (false) or allowed again (true); answers the state either way. Java
 * checks neither the group nor the topic for existence.
 */
async function updateAndGetGroupForbidden(ctx: BrokerContext, req: RemotingCommand): Promise<RemotingCommand> {
  const h = new HeaderReader(req.extFields);
  const group = h.str('group');
  const topic = h.str('topic');
  const manager = ctx.subscriptionGroupManager;
  if (h.optStr('readable') !== undefined) {
    manager.setReadForbidden(group, topic, !h.bool('readable'));
    await manager.saved(); // on disk before the answer, as Java's synchronous persist
  }
  const state = { group, readable: !manager.isReadForbidden(group, topic), topic };
  return createResponse(ResponseCode.SUCCESS, '', {}, body(stringifyFastjson(state)));
}

export function adminGroupProcessors(ctx: BrokerContext): ProcessorTable {
  return [
    [RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, async (req) => {
      const res = withBodyErrors(() => updateAndCreateSubscriptionGroup(ctx, req));
      await ctx.subscriptionGroupManager.saved(); // on disk before the answer, as Java's synchronous persist
      return res;
    }],
    [RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST, async (req) => {
      const res = withBodyErrors(() => updateAndCreateSubscriptionGroupList(ctx, req));
      await ctx.subscriptionGroupManager.saved();
      return res;
    }],
    [RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, () => getAllSubscriptionGroup(ctx)],
    [RequestCode.DELETE_SUBSCRIPTIONGROUP, (req) => deleteSubscriptionGroup(ctx, req)],
    [RequestCode.GET_SUBSCRIPTIONGROUP_CONFIG, (req) => getSubscriptionGroupConfig(ctx, req)],
    [RequestCode.GET_CONSUME_STATS, (req) => getConsumeStats(ctx, req)],
    [RequestCode.GET_BROKER_CONSUME_STATS, (req) => getBrokerConsumeStats(ctx, req)],
    [RequestCode.GET_CONSUMER_CONNECTION_LIST, (req) => getConsumerConnectionList(ctx, req)],
    [RequestCode.GET_PRODUCER_CONNECTION_LIST, (req) => getProducerConnectionList(ctx, req)],
    [RequestCode.GET_ALL_CONSUMER_OFFSET, () => getAllConsumerOffset(ctx)],
    [RequestCode.GET_ALL_PRODUCER_INFO, () => getAllProducerInfo(ctx)],
    [RequestCode.QUERY_TOPICS_BY_CONSUMER, (req) => queryTopicsByConsumer(ctx, req)],
    [RequestCode.UPDATE_AND_GET_GROUP_FORBIDDEN, (req) => updateAndGetGroupForbidden(ctx, req)],
  ];
}
