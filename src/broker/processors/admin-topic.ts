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
import { parseJsonBody } from './client-manage.js';
import { Turns, encodeMessageQueueTableInTurns } from './queue-tables.js';
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
/** Topics one UPDATE_AND_CREATE_TOPIC_LIST may carry (Java has no limit; each is a config entry and a registration). */
const MAX_TOPICS_PER_LIST = 10_000;

export function isSystemTopic(ctx: BrokerContext, topic: string): boolean {
  return JAVA_SYSTEM_TOPICS.includes(topic) || topic.startsWith(SYSTEM_TOPIC_PREFIX) || ctx.topicConfigManager.isSystemTopic(topic);
}

/** Everything Java's getSystemTopicSet holds on a running broker: the static set plus the broker's own. */
export function systemTopicList(ctx: BrokerContext): string[] {
  const out = new Set<string>(JAVA_SYSTEM_TOPICS);
  for (const name of ctx.topicConfigManager.table.keys()) if (isSystemTopic(ctx, name)) out.add(name);
  return [...out];
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

/** What one topic creation asks for, from a request header or one entry of a topic list. */
type TopicRequest = Omit<TopicConfig, 'topicName' | 'attributes'> & {
  topic: string;
  /** Java AttributeParser form: `+k=v,-k2`. */
  attributes: string | undefined;
};

/** The checks of a creation or update and the config it makes; a string is the refusal's remark. */
function topicConfigFor(ctx: BrokerContext, r: TopicRequest): TopicConfig | string {
  const invalid = validateTopicName(r.topic);
  if (invalid) return invalid;
  if (isSystemTopic(ctx, r.topic)) return `The topic[${r.topic}] is conflict with system topic.`;
  for (const [name, n] of [
    ['readQueueNums', r.readQueueNums],
    ['writeQueueNums', r.writeQueueNums],
  ] as const) {
    if (n < 0 || n > MAX_TOPIC_QUEUE_NUMS) return `${name} ${n} is out of range [0, ${MAX_TOPIC_QUEUE_NUMS}]`;
  }
  if (r.perm < 0 || r.perm > 15) return `perm ${r.perm} is not a permission (0-15; 6 = read+write)`;
  if (!TOPIC_FILTER_TYPES.includes(r.topicFilterType)) {
    return `topicFilterType ${r.topicFilterType} is not one of ${TOPIC_FILTER_TYPES.join(', ')}`;
  }
  const existing = ctx.topicConfigManager.get(r.topic);
  let attributes: Record<string, string>;
  try {
    attributes = applyAttributeModifications(existing?.attributes ?? {}, r.attributes, existing === undefined);
  } catch (err) {
    return (err as Error).message;
  }
  return {
    topicName: r.topic,
    readQueueNums: r.readQueueNums,
    writeQueueNums: r.writeQueueNums,
    perm: r.perm,
    topicFilterType: r.topicFilterType,
    topicSysFlag: r.topicSysFlag,
    order: r.order,
    attributes,
  };
}

/** Saves the configs that change anything (Java 5.x: an unchanged one is idempotent), then registers them. */
async function applyTopicConfigs(ctx: BrokerContext, configs: TopicConfig[]): Promise<void> {
  const changed = configs.filter((tc) => {
    const existing = ctx.topicConfigManager.get(tc.topicName);
    return !existing || !sameTopicConfig(existing, tc);
  });
  if (changed.length === 0) return;
  for (const tc of changed) {
    const existed = ctx.topicConfigManager.get(tc.topicName) !== undefined;
    ctx.logger.info({ topic: tc.topicName, readQueueNums: tc.readQueueNums, writeQueueNums: tc.writeQueueNums, perm: tc.perm }, existed ? 'topic updated' : 'topic created');
    ctx.topicConfigManager.upsert(tc, { callerRegisters: ctx.registerTopic !== undefined });
  }
  await ctx.topicConfigManager.saved(); // on disk before the answer, as Java's synchronous persist
  try {
    // Java registerIncrementBrokerData: those topics only
    if (ctx.registerTopic) for (const tc of changed) await ctx.registerTopic(tc);
    else await ctx.registerBrokerAll();
  } catch (err) {
    // The topics are saved; the periodic registration will carry them (Java logs and answers SUCCESS too).
    ctx.logger.warn({ err, topics: changed.map((tc) => tc.topicName) }, 'registering with nameservers after topic change failed');
  }
}

async function updateAndCreateTopic(ctx: BrokerContext, req: RemotingCommand): Promise<RemotingCommand> {
  const h = new HeaderReader(req.extFields);
  const topic = h.str('topic');
  const invalid = validateTopicName(topic);
  if (invalid) return createResponse(ResponseCode.INVALID_PARAMETER, invalid);
  const tc = topicConfigFor(ctx, {
    topic,
    readQueueNums: h.int('readQueueNums'),
    writeQueueNums: h.int('writeQueueNums'),
    perm: h.int('perm'),
    topicFilterType: h.optStr('topicFilterType') ?? 'SINGLE_TAG',
    topicSysFlag: h.optInt('topicSysFlag', 0) ?? 0,
    order: h.bool('order', false),
    attributes: h.optStr('attributes'),
  });
  if (typeof tc === 'string') return createResponse(ResponseCode.INVALID_PARAMETER, tc);
  await applyTopicConfigs(ctx, [tc]);
  return createResponse(ResponseCode.SUCCESS);
}

/** A number field of a list entry: absent → Java's TopicConfig default; anything but an integer is refused. */
function intField(o: Record<string, unknown>, name: string, dflt: number): number | string {
  const v = o[name];
  if (v === undefined || v === null) return dflt;
  return typeof v === 'number' && Number.isInteger(v) ? v : `${name} ${JSON.stringify(v)} is not an integer`;
}

/**
 * 5.x UPDATE_AND_CREATE_TOPIC_LIST (18, mqadmin updateTopicList): a body `{"topicConfigList":[TopicConfig...]}`.
 * Every entry is checked first, then all are applied, or none. Java answers SUCCESS without applying the rest as
 * soon as one entry equals its current config; we apply every entry that changes something.
 */
async function updateAndCreateTopicList(ctx: BrokerContext, req: RemotingCommand): Promise<RemotingCommand> {
  let list: unknown;
  try {
    list = (parseJsonBody(req, 'UPDATE_AND_CREATE_TOPIC_LIST (a {"topicConfigList":[...]} body is required)') as Record<string, unknown> | null)?.topicConfigList;
  } catch (err) {
    return createResponse(ResponseCode.SYSTEM_ERROR, (err as Error).message);
  }
  if (!Array.isArray(list)) return createResponse(ResponseCode.INVALID_PARAMETER, 'UPDATE_AND_CREATE_TOPIC_LIST: topicConfigList is not a list');
  if (list.length > MAX_TOPICS_PER_LIST) {
    return createResponse(ResponseCode.INVALID_PARAMETER, `UPDATE_AND_CREATE_TOPIC_LIST: ${list.length} topics, at most ${MAX_TOPICS_PER_LIST} a request`);
  }
  const configs: TopicConfig[] = [];
  for (const entry of list) {
    if (entry === null || typeof entry !== 'object') return createResponse(ResponseCode.INVALID_PARAMETER, 'topicConfigList: an entry is not a TopicConfig object');
    const o = entry as Record<string, unknown>;
    const ints = ['readQueueNums', 'writeQueueNums', 'perm', 'topicSysFlag'].map((n) => intField(o, n, n === 'perm' ? 6 : n === 'topicSysFlag' ? 0 : 16));
    const bad = ints.find((v) => typeof v === 'string');
    if (bad !== undefined) return createResponse(ResponseCode.INVALID_PARAMETER, `topic ${String(o.topicName)}: ${bad as string}`);
    const [readQueueNums, writeQueueNums, perm, topicSysFlag] = ints as number[];
    const attrs = o.attributes && typeof o.attributes === 'object' ? Object.entries(o.attributes as Record<string, unknown>) : [];
    const tc = topicConfigFor(ctx, {
      topic: typeof o.topicName === 'string' ? o.topicName : '',
      readQueueNums: readQueueNums!,
      writeQueueNums: writeQueueNums!,
      perm: perm!,
      topicFilterType: typeof o.topicFilterType === 'string' ? o.topicFilterType : 'SINGLE_TAG',
      topicSysFlag: topicSysFlag!,
      order: o.order === true,
      // Java keeps the AttributeParser signs in the map's keys: {"+message.type":"NORMAL","-k":""}
      attributes: attrs.length > 0 ? attrs.map(([k, v]) => (k.startsWith('-') ? k : `${k}=${String(v)}`)).join(',') : undefined,
    });
    if (typeof tc === 'string') return createResponse(ResponseCode.INVALID_PARAMETER, tc);
    configs.push(tc);
  }
  await applyTopicConfigs(ctx, configs);
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
  ctx.popInflight?.clearTopic(topic);
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
  const turns = new Turns();
  for (let queueId = 0; queueId < queues; queueId++) {
    await turns.done();
    const minOffset = Math.max(0, store.getMinOffsetInQueue(topic, queueId));
    const maxOffset = Math.max(0, store.getMaxOffsetInQueue(topic, queueId));
    const lastUpdateTimestamp = maxOffset > 0 ? await store.getMessageStoreTimestamp(topic, queueId, maxOffset - 1) : 0;
    entries.push([{ brokerName: ctx.config.brokerName, queueId, topic }, { lastUpdateTimestamp, maxOffset, minOffset }]);
  }
  // 5.x adds the topic's put rate over the last minute (older clients ignore the field).
  const body = await encodeMessageQueueTableInTurns(entries, { topicPutTps: new JavaDouble(ctx.stats.items.snapshot(StatsName.TOPIC_PUT_NUMS, topic, 'minute')?.tps ?? 0) });
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
    [RequestCode.UPDATE_AND_CREATE_TOPIC_LIST, (req) => updateAndCreateTopicList(ctx, req)],
    [RequestCode.DELETE_TOPIC_IN_BROKER, (req) => deleteTopic(ctx, req)],
    [RequestCode.GET_ALL_TOPIC_CONFIG, () => getAllTopicConfig(ctx)],
    [RequestCode.GET_TOPIC_CONFIG, (req) => getTopicConfig(ctx, req)],
    [RequestCode.GET_TOPIC_STATS_INFO, (req) => getTopicStatsInfo(ctx, req)],
    [RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_BROKER, () => getSystemTopicList(ctx)],
    [RequestCode.QUERY_TOPIC_CONSUME_BY_WHO, (req) => queryTopicConsumeByWho(ctx, req)],
  ];
}
