// HEART_BEAT (34), UNREGISTER_CLIENT (35), CHECK_CLIENT_CONFIG (46).
// Java: broker/processor/ClientManageProcessor.java; bodies remoting/protocol/heartbeat/*.java.
import { parseFastjson } from '../../common/fastjson.js';
import { limited } from '../../common/log-limiter.js';
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { HeaderReader, type RemotingCommand, createResponse } from '../../remoting/command.js';
import type { ProcessorTable, RequestContext } from '../../remoting/dispatcher.js';
import type { ClientIdentity } from '../client/consumer-manager.js';
import type { SubscriptionData } from '../client/types.js';
import type { BrokerContext } from '../context.js';
import { compileSubscription } from '../filter/sql-filter.js';
import { Perm, retryTopic } from '../topic/topic-config.js';

/** Java TopicSysFlag.FLAG_UNIT_SUB: retry topics of unit-mode consumers carry it. */
const TOPIC_SYS_FLAG_UNIT_SUB = 2;

const CONSUME_TYPES = ['CONSUME_ACTIVELY', 'CONSUME_PASSIVELY', 'CONSUME_POP'] as const;
const MESSAGE_MODELS = ['BROADCASTING', 'CLUSTERING'] as const;
const CONSUME_FROM_WHERE = [
  'CONSUME_FROM_LAST_OFFSET',
  'CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST',
  'CONSUME_FROM_MIN_OFFSET',
  'CONSUME_FROM_MAX_OFFSET',
  'CONSUME_FROM_FIRST_OFFSET',
  'CONSUME_FROM_TIMESTAMP',
] as const;

export interface ConsumerData {
  groupName: string;
  consumeType: string;
  messageModel: string;
  consumeFromWhere: string;
  subscriptionDataSet: SubscriptionData[];
  unitMode: boolean;
}

export interface HeartbeatData {
  clientID: string;
  consumerDataSet: ConsumerData[];
  producerDataSet: Array<{ groupName: string }>;
  /** 5.x heartbeat v2; 0 = classic heartbeat. */
  heartbeatFingerprint: number;
  withoutSub: boolean;
}

/** A body we cannot use: the message becomes the response remark. */
export class BodyError extends Error {}

/**
 * Parses a JSON request body leniently (fastjson output, Go jsoniter, JS JSON.stringify). Throws BodyError with
 * a remark naming the request when the body is missing or not JSON.
 */
export function parseJsonBody(req: RemotingCommand, what: string): unknown {
  if (!req.body || req.body.length === 0) throw new BodyError(`${what}: request body is empty`);
  try {
    return parseFastjson(req.body);
  } catch (err) {
    throw new BodyError(`${what}: request body is not valid JSON (${(err as Error).message})`);
  }
}

const looseName = (s: string): string => s.replace(/[_-]/g, '').toLowerCase();

/** A property by its exact name, or by fastjson's loose match (case, `_` and `-` ignored). */
export function field(o: Record<string, unknown>, name: string): unknown {
  if (Object.hasOwn(o, name)) return o[name];
  const want = looseName(name);
  for (const k of Object.keys(o)) if (looseName(k) === want) return o[k];
  return undefined;
}

export function asObject(v: unknown, what: string): Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v) || v instanceof Map) {
    throw new BodyError(`${what} must be a JSON object`);
  }
  return v as Record<string, unknown>;
}

function asArray(v: unknown, what: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v)) return v;
  throw new BodyError(`${what} must be a JSON array`);
}

function optString(v: unknown, what: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  throw new BodyError(`${what} must be a string`);
}

function toNumber(v: unknown, what: string): number {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  throw new BodyError(`${what} must be a number, got ${JSON.stringify(typeof v === 'bigint' ? String(v) : v)}`);
}

function toBool(v: unknown): boolean {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') return v.toLowerCase() === 'true';
  if (typeof v === 'number') return v !== 0;
  return false;
}

/** fastjson reads enums by name or ordinal; unknown names are kept as given (they are only displayed). */
function enumName(v: unknown, values: readonly string[], dflt: string, what: string): string {
  if (v === undefined || v === null || v === '') return dflt;
  if (typeof v === 'number') {
    const name = values[v];
    if (name === undefined) throw new BodyError(`${what}: unknown ordinal ${v}`);
    return name;
  }
  if (typeof v === 'string') return v.trim();
  throw new BodyError(`${what} must be a string`);
}

/** Java SubscriptionData from any client; ali-ons omits expressionType, Go writes codes as strings. */
export function decodeSubscriptionData(raw: unknown, what: string): SubscriptionData {
  const o = asObject(raw, what);
  const topic = optString(field(o, 'topic'), `${what}.topic`);
  if (!topic) throw new BodyError(`${what}.topic is missing`);
  const subString = optString(field(o, 'subString'), `${what}.subString`);
  const expressionType = optString(field(o, 'expressionType'), `${what}.expressionType`);
  const subVersion = field(o, 'subVersion');
  return {
    topic,
    subString: subString === undefined || subString === '' ? '*' : subString,
    expressionType: expressionType === undefined || expressionType.trim() === '' ? 'TAG' : expressionType.trim().toUpperCase(),
    tagsSet: asArray(field(o, 'tagsSet'), `${what}.tagsSet`).map((t) => String(t)),
    codeSet: asArray(field(o, 'codeSet'), `${what}.codeSet`).map((c, i) => toNumber(c, `${what}.codeSet[${i}]`) | 0),
    // Java's default is the construction time; 0 would make every pull look "not latest".
    subVersion: subVersion === undefined || subVersion === null ? Date.now() : toNumber(subVersion, `${what}.subVersion`),
    classFilterMode: toBool(field(o, 'classFilterMode')),
  };
}

export function decodeHeartbeat(raw: unknown): HeartbeatData {
  const o = asObject(raw, 'heartbeat body');
  const clientID = optString(field(o, 'clientID'), 'clientID');
  if (!clientID) throw new BodyError('heartbeat body has no clientID');
  const consumerDataSet = asArray(field(o, 'consumerDataSet'), 'consumerDataSet').map((c, i): ConsumerData => {
    const what = `consumerDataSet[${i}]`;
    const d = asObject(c, what);
    return {
      groupName: optString(field(d, 'groupName'), `${what}.groupName`) ?? '',
      consumeType: enumName(field(d, 'consumeType'), CONSUME_TYPES, 'CONSUME_PASSIVELY', `${what}.consumeType`),
      messageModel: enumName(field(d, 'messageModel'), MESSAGE_MODELS, 'CLUSTERING', `${what}.messageModel`),
      consumeFromWhere: enumName(field(d, 'consumeFromWhere'), CONSUME_FROM_WHERE, 'CONSUME_FROM_LAST_OFFSET', `${what}.consumeFromWhere`),
      subscriptionDataSet: asArray(field(d, 'subscriptionDataSet'), `${what}.subscriptionDataSet`).map((s, j) =>
        decodeSubscriptionData(s, `${what}.subscriptionDataSet[${j}]`),
      ),
      unitMode: toBool(field(d, 'unitMode')),
    };
  });
  const producerDataSet = asArray(field(o, 'producerDataSet'), 'producerDataSet').map((p, i) => {
    const d = asObject(p, `producerDataSet[${i}]`);
    return { groupName: optString(field(d, 'groupName'), `producerDataSet[${i}].groupName`) ?? '' };
  });
  const fp = field(o, 'heartbeatFingerprint');
  return {
    clientID,
    consumerDataSet,
    producerDataSet,
    heartbeatFingerprint: fp === undefined || fp === null ? 0 : toNumber(fp, 'heartbeatFingerprint'),
    withoutSub: toBool(field(o, 'withoutSub')),
  };
}

/** Runs a processor body, turning BodyError into SYSTEM_ERROR (what Java answers when a body fails to decode). */
export function withBodyErrors(fn: () => RemotingCommand): RemotingCommand {
  try {
    return fn();
  } catch (err) {
    if (err instanceof BodyError) return createResponse(ResponseCode.SYSTEM_ERROR, err.message);
    throw err;
  }
}

/** Longest a heartbeat waits for the nameservers to learn a retry topic it created (Java waits for registerBrokerAll). */
const RETRY_TOPIC_REGISTRATION_WAIT_MS = 3000;

/**
 * HEART_BEAT. When it creates a group's retry topic, the answer waits (bounded) until the nameservers know the
 * topic, as Java's does (createTopicInSendMessageBackMethod registers before the heartbeat returns): clients look
 * the retry topic's route up right after their first heartbeat.
 */
async function heartBeatAndRegister(ctx: BrokerContext, req: RemotingCommand, rc: RequestContext): Promise<RemotingCommand> {
  let created = false;
  const res = withBodyErrors(() => heartBeat(ctx, req, rc, () => {
    created = true;
  }));
  if (created) {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, Math.min(RETRY_TOPIC_REGISTRATION_WAIT_MS, ctx.config.registerBrokerTimeoutMills));
    });
    await Promise.race([ctx.registerBrokerAll().catch(() => undefined), deadline]);
    clearTimeout(timer);
  }
  return res;
}

function heartBeat(ctx: BrokerContext, req: RemotingCommand, rc: RequestContext, onTopicCreated: () => void): RemotingCommand {
  const hb = decodeHeartbeat(parseJsonBody(req, 'HEART_BEAT'));
  const client: ClientIdentity = { clientId: hb.clientID, language: req.language, version: req.version };
  const conn = rc.channel;
  // Heartbeat v2 (5.x, opt-in after the broker advertises it, which we do not): withoutSub means "unchanged".
  const updateSubscription = !(hb.heartbeatFingerprint !== 0 && hb.withoutSub);
  for (const data of hb.consumerDataSet) {
    if (!data.groupName) {
      limited(ctx.logger).warn('heartbeat-no-group', { clientId: hb.clientID }, 'heartbeat consumer data without groupName ignored');
      continue;
    }
    const groupConfig = ctx.subscriptionGroupManager.findSubscriptionGroupConfig(data.groupName);
    if (!groupConfig) {
      // Java 5.x: no config (auto-create off, or an invalid name) → the consumer is not registered.
      limited(ctx.logger).warn('heartbeat-unknown-group', { group: data.groupName, clientId: hb.clientID }, 'heartbeat from a consumer group that does not exist');
      continue;
    }
    const retry = retryTopic(data.groupName);
    if (!ctx.topicConfigManager.get(retry)) onTopicCreated();
    ctx.topicConfigManager.createTopicIfAbsent(
      retry,
      groupConfig.retryQueueNums,
      Perm.READ | Perm.WRITE,
      data.unitMode ? TOPIC_SYS_FLAG_UNIT_SUB : 0,
    );
    ctx.consumerManager.registerConsumer(
      data.groupName,
      conn,
      client,
      {
        consumeType: data.consumeType,
        messageModel: data.messageModel,
        consumeFromWhere: data.consumeFromWhere,
        subscriptions: data.subscriptionDataSet,
      },
      { notifyEnabled: groupConfig.notifyConsumerIdsChangedEnable, updateSubscription },
    );
  }
  for (const p of hb.producerDataSet) {
    if (p.groupName) ctx.producerManager.registerProducer(p.groupName, conn, client);
  }
  return createResponse(ResponseCode.SUCCESS);
}

function unregisterClient(ctx: BrokerContext, req: RemotingCommand, rc: RequestContext): RemotingCommand {
  const h = new HeaderReader(req.extFields);
  const clientId = h.str('clientID');
  const producerGroup = h.optStr('producerGroup');
  const consumerGroup = h.optStr('consumerGroup');
  if (producerGroup) ctx.producerManager.unregisterProducer(producerGroup, rc.channel, clientId);
  if (consumerGroup) {
    const groupConfig = ctx.subscriptionGroupManager.findSubscriptionGroupConfig(consumerGroup);
    ctx.consumerManager.unregisterConsumer(consumerGroup, rc.channel, groupConfig?.notifyConsumerIdsChangedEnable ?? true);
  }
  return createResponse(ResponseCode.SUCCESS);
}

function checkClientConfig(ctx: BrokerContext, req: RemotingCommand): RemotingCommand {
  // Java: a missing body or subscription passes.
  if (!req.body || req.body.length === 0) return createResponse(ResponseCode.SUCCESS);
  const o = asObject(parseJsonBody(req, 'CHECK_CLIENT_CONFIG'), 'CHECK_CLIENT_CONFIG body');
  const rawSub = field(o, 'subscriptionData');
  if (rawSub === undefined || rawSub === null) return createResponse(ResponseCode.SUCCESS);
  const sub = decodeSubscriptionData(rawSub, 'subscriptionData');
  if (sub.expressionType === 'TAG') return createResponse(ResponseCode.SUCCESS);
  if (!ctx.config.enablePropertyFilter) {
    return createResponse(ResponseCode.SYSTEM_ERROR, `The broker does not support consumer to filter message by ${sub.expressionType}`);
  }
  try {
    compileSubscription(sub);
  } catch (err) {
    // Java answers the compile exception's message (MQFilterException wrapping the ParseException).
    return createResponse(ResponseCode.SUBSCRIPTION_PARSE_FAILED, `Invalid MessageSelector. ${(err as Error).message}`);
  }
  return createResponse(ResponseCode.SUCCESS);
}

export function clientManageProcessors(ctx: BrokerContext): ProcessorTable {
  return [
    [RequestCode.HEART_BEAT, (req, rc) => heartBeatAndRegister(ctx, req, rc)],
    [RequestCode.UNREGISTER_CLIENT, (req, rc) => unregisterClient(ctx, req, rc)],
    [RequestCode.CHECK_CLIENT_CONFIG, (req) => withBodyErrors(() => checkClientConfig(ctx, req))],
  ];
}
