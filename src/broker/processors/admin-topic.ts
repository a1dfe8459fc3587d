// Topic administration: UPDATE_AND_CREATE_TOPIC (17), DELETE_TOPIC_IN_BROKER (215), GET_ALL_TOPIC_CONFIG (21),
// GET_TOPIC_STATS_INFO (202), GET_TOPIC_CONFIG (351), GET_SYSTEM_TOPIC_LIST_FROM_BROKER (305),
// QUERY_TOPIC_CONSUME_BY_WHO (300). Java: broker/processor/AdminBrokerProcessor.java (4.9.x and 5.x).
import { JavaDouble, stringifyFastjson } from '../../common/fastjson.js';
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { HeaderReader, type RemotingCommand, createResponse } from '../../remoting/command.js';
import type { ProcessorTable } from '../../remoting/dispatcher.js';
import type { MessageQueue } from '../client/types.js';
import type { BrokerContext } from '../context.js';
import { StatsName } from '../stats-items.js';
import { SystemTopic, type TopicConfig, validateTopicName } from '../topic/topic-config.js';

/** Java TopicValidator.SYSTEM_TOPIC_SET (static part; the broker adds its cluster/broker-name topics at start). */
export const JAVA_SYSTEM_TOPICS: readonly string[] = [
  SystemTopic.AUTO_CREATE_TOPIC_KEY,
  SystemTopic.SCHEDULE_TOPIC,
  SystemTopic.BENCHMARK,
  SystemTopic.TRANS_HALF,
  'RMQ_SYS_TRACE_TOPIC',
  SystemTopic.TRANS_OP_HALF,
  SystemTopic.TRANS_CHECK_MAX_TIME,
  SystemTopic.SELF_TEST,
  SystemTopic.OFFSET_MOVED_EVENT,
  'CHECKPOINT_TOPIC', // 5.x
];
/** Java TopicValidator.SYSTEM_TOPIC_PREFIX. */
export const SYSTEM_TOPIC_PREFIX = 'rmq_sys_';

/** Our limit on queue counts of a created topic (Java has none; each queue is a consume-queue directory). */
export const MAX_TOPIC_QUEUE_NUMS = 16384;
const TOPIC_FILTER_TYPES = ['SINGLE_TAG', 'MULTI_TAG'];

export function isSystemTopic(ctx: BrokerContext, topic: string): boolean {
  return JAVA_SYSTEM_TOPICS.includes(topic) || topic.startsWith(SYSTEM_TOPIC_PREFIX) || ctx.topicConfigManager.isSystemTopic(topic);
}

/** Everything Java's getSystemTopicSet holds on a running broker: the static set plus the broker's own. */
export function systemTopicList(ctx: BrokerContext): string[] {
  const out = new Set<string>(JAVA_SYSTEM_TOPICS);
  for (const name of ctx.topicConfigManager.table.keys()) if (isSystemTopic(ctx, name)) out.add(name);
  return [...out];
}

/** Encodes a MessageQueue-keyed table the way fastjson does (object keys in place; mqadmin/Go expect it). */
export function encodeMessageQueueTable(entries: Array<[MessageQueue, object]>, extra: Record<string, unknown> = {}): string {
  return stringifyFastjson({ ...extra, offsetTable: new Map(entries) });
}

/**
 * 5.x attribute modifications (AttributeParser + AttributeUtil.alterCurrentAttributes): `+k=v` adds or updates,
 * `-k` deletes (only when updating); returns the new attribute map or throws Error with a remark.
 */
export function applyAttributeModifications(current: Record<string, string>, modification: string | undefined, creating: boolean): Record<string, string> {
  const out = { ...current };
  if (!modification) return out;
  const seen = new Set<string>();
  for (const kv of modification.split(',')) {
    const eq = kv.indexOf('=');
    const key = eq >= 0 ? kv.slice(0, eq) : kv;
    const sign = key[0];
    const realKey = key.slice(1);
    if (realKey === '') throw new Error(`wrong format attribute: "${kv}"`);
    if (seen.has(realKey)) throw new Error(`key duplication: ${realKey}`);
    seen.add(realKey);
    if (sign === '+' && eq >= 0) {
      out[realKey] = kv.slice(eq + 1);
    } else if (sign === '-' && eq < 0) {
      if (creating) throw new Error(`only add attribute is supported while creating topic. key: ${realKey}`);
      if (!(realKey in out)) throw new Error(`attempt to delete a nonexistent key: ${realKey}`);
      delete out[realKey];
    } else {
      throw new Error(`wrong format attribute: "${kv}" (use +key=value to add or -key to delete)`);
    }
  }
  return out;
}

function sameTopicConfig(a: TopicConfig, b: TopicConfig): boolean {
  return stringifyFastjson(a) === stringifyFastjson(b);
}

async function updateAndCreateTopic(ctx: BrokerContext, req: RemotingCommand): Promise<RemotingCommand> {
  const h = new HeaderReader(req.extFields);
  const topic = h.str('topic');
  const invalid = validateTopicName(topic);
  if (invalid) return createResponse(ResponseCode.INVALID_PARAMETER, invalid);
  if (isSystemTopic(ctx, topic)) {
    return createResponse(ResponseCode.INVALID_PARAMETER, `The topic[${topic}] is conflict with system topic.`);
  }
  const readQueueNums = h.int('readQueueNums');
  const writeQueueNums = h.int('writeQueueNums');
  const perm = h.int('perm');
  const topicFilterType = h.optStr('topicFilterType') ?? 'SINGLE_TAG';
  const topicSysFlag = h.optInt('topicSysFlag', 0) ?? 0;
  for (const [name, n] of [
    ['readQueueNums', readQueueNums],
    ['writeQueueNums', writeQueueNums],
  ] as const) {
    if (n < 0 || n > MAX_TOPIC_QUEUE_NUMS) {
      return createResponse(ResponseCode.INVALID_PARAMETER, `${name} ${n} is out of range [0, ${MAX_TOPIC_QUEUE_NUMS}]`);
    }
  }
  if (perm < 0 || perm > 15) return createResponse(ResponseCode.INVALID_PARAMETER, `perm ${perm} is not a permission (0-15; 6 = read+write)`);
  if (!TOPIC_FILTER_TYPES.includes(topicFilterType)) {
    return createResponse(ResponseCode.INVALID_PARAMETER, `topicFilterType ${topicFilterType} is not one of ${TOPIC_FILTER_TYPES.join(', ')}`);
  }
  const existing = ctx.topicConfigManager.get(topic);
  let attributes: Record<string, string>;
  try {
    attributes = applyAttributeModifications(existing?.attributes ?? {}, h.optStr('attributes'), existing === undefined);
  } catch (err) {
    return createResponse(ResponseCode.INVALID_PARAMETER, (err as Error).message);
  }
  const tc: TopicConfig = {
    topicName: topic,
    readQueueNums,
    writeQueueNums,
    perm,
    topicFilterType,
    topicSysFlag,
    order: h.bool('order', false),
    attributes,
  };
  if (existing && sameTopicConfig(existing, tc)) return createResponse(ResponseCode.SUCCESS); // idempotent (Java 5.x)
  ctx.logger.info({ topic, readQueueNums, writeQueueNums, perm }, existing ? 'topic updated' : 'topic created');
  ctx.topicConfigManager.upsert(tc, { callerRegisters: ctx.registerTopic !== undefined });
  await ctx.topicConfigManager.saved(); // on disk before the answer, as Java's synchronous persist
  try {
    // Java registerIncrementBrokerData: that topic only
    await (ctx.registerTopic ? ctx.registerTopic(tc) : ctx.registerBrokerAll());
  } catch (err) {
    // The topic is saved; the periodic registration will carry it (Java logs and answers SUCCESS too).
    ctx.logger.warn({ err, topic }, 'registering with nameservers after topic change failed');
  }
  return createResponse(ResponseCode.SUCCESS);
}

async function deleteTopic(ctx: BrokerContext, req: RemotingCommand): Promise<RemotingCommand> {
  const topic = new HeaderReader(req.extFields).str('topic');
  if (topic.trim() === '') return createResponse(ResponseCode.INVALID_PARAMETER, 'The specified topic is blank.');
  if (isSystemTopic(ctx, topic)) {
    return createResponse(ResponseCode.INVALID_PARAMETER, `The topic[${topic}] is conflict with system topic.`);
  }
  ctx.topicConfigManager.delete(topic);
  await ctx.topicConfigManager.saved();
  ctx.consumerOffsetManager.removeTopic(topic);
  try {
    await ctx.store.deleteTopic(topic);
  } catch (err) {
    ctx.logger.error({ err, topic }, 'deleting topic queues failed');
    return createResponse(ResponseCode.SYSTEM_ERROR, `topic[${topic}] config removed, but deleting its queues failed (${(err as NodeJS.ErrnoException).code ?? 'error'}; see the broker log)`);
  }
  ctx.logger.info({ topic }, 'topic deleted');
  return createResponse(ResponseCode.SUCCESS);
}

function getAllTopicConfig(ctx: BrokerContext): RemotingCommand {
  const tcm = ctx.topicConfigManager;
  return createResponse(ResponseCode.SUCCESS, undefined, { totalTopicNum: String(tcm.table.size) }, Buffer.from(stringifyFastjson(tcm.wrapper())));
}

function getTopicConfig(ctx: BrokerContext, req: RemotingCommand): RemotingCommand {
  const topic = new HeaderReader(req.extFields).str('topic');
  const tc = ctx.topicConfigManager.get(topic);
  if (!tc) return createResponse(ResponseCode.TOPIC_NOT_EXIST, `No topic in this broker. topic: ${topic}`);
  return createResponse(ResponseCode.SUCCESS, undefined, {}, Buffer.from(stringifyFastjson(tc)));
}

async function getTopicStatsInfo(ctx: BrokerContext, req: RemotingCommand): Promise<RemotingCommand> {
  const topic = new HeaderReader(req.extFields).str('topic');
  const tc = ctx.topicConfigManager.get(topic);
  if (!tc) return createResponse(ResponseCode.TOPIC_NOT_EXIST, `topic[${topic}] not exist`);
  const { store } = ctx;
  const queues = Math.max(tc.readQueueNums, tc.writeQueueNums);
  const entries: Array<[MessageQueue, Record<string, unknown>]> = [];
  for (let queueId = 0; queueId < queues; queueId++) {
    const minOffset = Math.max(0, store.getMinOffsetInQueue(topic, queueId));
    const maxOffset = Math.max(0, store.getMaxOffsetInQueue(topic, queueId));
    const lastUpdateTimestamp = maxOffset > 0 ? await store.getMessageStoreTimestamp(topic, queueId, maxOffset - 1) : 0;
    entries.push([{ brokerName: ctx.config.brokerName, queueId, topic }, { lastUpdateTimestamp, maxOffset, minOffset }]);
  }
  // 5.x adds the topic's put rate over the last minute (older clients ignore the field).
  const body = encodeMessageQueueTable(entries, { topicPutTps: new JavaDouble(ctx.stats.items.snapshot(StatsName.TOPIC_PUT_NUMS, topic, 'minute')?.tps ?? 0) });
  return createResponse(ResponseCode.SUCCESS, undefined, {}, Buffer.from(body));
}

function getSystemTopicList(ctx: BrokerContext): RemotingCommand {
  return createResponse(ResponseCode.SUCCESS, undefined, {}, Buffer.from(stringifyFastjson({ topicList: systemTopicList(ctx) })));
}

function queryTopicConsumeByWho(ctx: BrokerContext, req: RemotingCommand): RemotingCommand {
  const topic = new HeaderReader(req.extFields).str('topic');
  const groups = new Set(ctx.consumerManager.groupsByTopic(topic));
  for (const g of ctx.consumerOffsetManager.whichGroupByTopic(topic)) groups.add(g);
  return createResponse(ResponseCode.SUCCESS, undefined, {}, Buffer.from(stringifyFastjson({ groupList: [...groups] })));
}

export function adminTopicProcessors(ctx: BrokerContext): ProcessorTable {
  return [
    [RequestCode.UPDATE_AND_CREATE_TOPIC, (req) => updateAndCreateTopic(ctx, req)],
    [RequestCode.DELETE_TOPIC_IN_BROKER, (req) => deleteTopic(ctx, req)],
    [RequestCode.GET_ALL_TOPIC_CONFIG, () => getAllTopicConfig(ctx)],
    [RequestCode.GET_TOPIC_CONFIG, (req) => getTopicConfig(ctx, req)],
    [RequestCode.GET_TOPIC_STATS_INFO, (req) => getTopicStatsInfo(ctx, req)],
    [RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_BROKER, () => getSystemTopicList(ctx)],
    [RequestCode.QUERY_TOPIC_CONSUME_BY_WHO, (req) => queryTopicConsumeByWho(ctx, req)],
  ];
}
