// An apache.rocketmq.v2.Message as the properties, flag and born time of a stored message (Java proxy
// grpc/v2/producer/SendMessageActivity.buildMessage / buildMessageProperty / buildSysFlag), with the proxy's checks
// in its order, codes and texts. Insertion order of the map is the order written.
import { MessageConst } from '../common/message-properties.js';
import { SysFlag } from '../store/index.js';
import { GrpcProps, RESERVED_PROPERTY_KEYS } from './message-convert.js';
import type { Msg } from './services.js';
import { GrpcStatusError } from './status.js';
import { containsControlCharacter, toMillis, validateTag } from './validators.js';

export interface SendLimits {
  maxMessageSize: number;
  userPropertyMaxNum: number;
  maxUserPropertySize: number;
  maxMessageGroupSize: number;
  maxDelayTimeMills: number;
  maxTransactionRecoverySecond: number;
}

export interface BuiltMessage {
  body: Buffer;
  properties: Map<string, string>;
  sysFlag: number;
  bornTimestamp: number;
  uniqKey: string;
  messageGroup: string;
}

const isBlank = (s: string): boolean => s.trim() === '';
const utf8Bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

export function buildSysFlag(m: Msg): number {
  let flag = 0;
  if (m.system_properties?.body_encoding === 'GZIP') flag |= SysFlag.COMPRESSED;
  if (m.system_properties?.message_type === 'TRANSACTION') flag |= SysFlag.TRANSACTION_PREPARED_TYPE;
  return flag;
}

/** `producerGroup` is the topic (Java: the proxy uses the topic name as producer group for check-backs). */
export function buildMessage(m: Msg, producerGroup: string, peer: string, limits: SendLimits): BuiltMessage {
  const body: Buffer = m.body ?? Buffer.alloc(0);
  if (body.length === 0) throw new GrpcStatusError('MESSAGE_BODY_EMPTY', 'message body cannot be empty');
  if (limits.maxMessageSize > 0 && body.length > limits.maxMessageSize) {
    throw new GrpcStatusError('MESSAGE_BODY_TOO_LARGE', `message body cannot exceed the max ${limits.maxMessageSize}`);
  }
  const sys: Msg = m.system_properties ?? {};
  const user: Record<string, string> = m.user_properties ?? {};
  const props = new Map<string, string>();
  const userKeys = Object.keys(user);
  if (userKeys.length > limits.userPropertyMaxNum) {
    throw new GrpcStatusError('MESSAGE_PROPERTIES_TOO_LARGE', `too many user properties, max is ${limits.userPropertyMaxNum}`);
  }
  let userBytes = 0;
  for (const k of userKeys) {
    const v = String(user[k]);
    if (RESERVED_PROPERTY_KEYS.has(k)) throw new GrpcStatusError('ILLEGAL_MESSAGE_PROPERTY_KEY', `property is used by system: ${k}`);
    if (containsControlCharacter(k)) throw new GrpcStatusError('ILLEGAL_MESSAGE_PROPERTY_KEY', 'the key of property cannot contain control character');
    if (containsControlCharacter(v)) throw new GrpcStatusError('ILLEGAL_MESSAGE_PROPERTY_KEY', 'the value of property cannot contain control character');
    userBytes += utf8Bytes(k) + utf8Bytes(v);
    props.set(k, v);
  }
  const tag = String(sys.tag ?? '');
  validateTag(tag);
  props.set(MessageConst.TAGS, tag); // Java Message.setTags: always set, "" when the message has none
  userBytes += utf8Bytes(tag);
  const keys: string[] = (sys.keys ?? []).map(String);
  for (const key of keys) {
    if (key !== '' && isBlank(key)) throw new GrpcStatusError('ILLEGAL_MESSAGE_KEY', 'key cannot be the char sequence of whitespace');
    if (containsControlCharacter(key)) throw new GrpcStatusError('ILLEGAL_MESSAGE_KEY', 'key cannot contain control character');
    userBytes += utf8Bytes(key);
  }
  if (keys.length > 0) props.set(MessageConst.KEYS, keys.join(' '));
  if (userBytes > limits.maxUserPropertySize) {
    throw new GrpcStatusError('MESSAGE_PROPERTIES_TOO_LARGE', `the total size of user property is too large, max is ${limits.maxUserPropertySize}`);
  }
  const uniqKey = String(sys.message_id ?? '');
  if (isBlank(uniqKey)) throw new GrpcStatusError('ILLEGAL_MESSAGE_ID', 'message id cannot be empty');
  props.set(MessageConst.UNIQ_CLIENT_MESSAGE_ID_KEYIDX, uniqKey);
  if (sys.message_type === 'TRANSACTION') {
    props.set(MessageConst.TRANSACTION_PREPARED, 'true');
    if (sys.orphaned_transaction_recovery_duration) {
      const seconds = Math.trunc(toMillis(sys.orphaned_transaction_recovery_duration) / 1000);
      if (limits.maxTransactionRecoverySecond > 0 && seconds > limits.maxTransactionRecoverySecond) {
        throw new GrpcStatusError('BAD_REQUEST', `the max transaction recovery time of message is too large, max is ${limits.maxTransactionRecoverySecond}`);
      }
      props.set(MessageConst.CHECK_IMMUNITY_TIME_IN_SECONDS, String(seconds));
    }
  }
  if (sys.delivery_timestamp) {
    const deliverMs = toMillis(sys.delivery_timestamp);
    if (limits.maxDelayTimeMills > 0 && deliverMs - Date.now() > limits.maxDelayTimeMills) {
      throw new GrpcStatusError('ILLEGAL_DELIVERY_TIME', `the max delay time of message is too large, max is ${limits.maxDelayTimeMills}`);
    }
    props.set(MessageConst.TIMER_DELIVER_MS, String(deliverMs));
  }
  props.set(MessageConst.RECONSUME_TIME, String(Number(sys.delivery_attempt ?? 0)));
  props.set(MessageConst.PRODUCER_GROUP, producerGroup);
  const messageGroup = String(sys.message_group ?? '');
  if (messageGroup !== '') {
    if (isBlank(messageGroup)) throw new GrpcStatusError('ILLEGAL_MESSAGE_GROUP', 'message group cannot be the char sequence of whitespace');
    if (limits.maxMessageGroupSize > 0 && utf8Bytes(messageGroup) >= limits.maxMessageGroupSize) {
      throw new GrpcStatusError('ILLEGAL_MESSAGE_GROUP', `message group exceed the max size ${limits.maxMessageGroupSize}`);
    }
    if (containsControlCharacter(messageGroup)) throw new GrpcStatusError('ILLEGAL_MESSAGE_GROUP', 'message group cannot contain control character');
    props.set(GrpcProps.SHARDING_KEY, messageGroup);
  }
  const trace = String(sys.trace_context ?? '');
  if (trace !== '') props.set(GrpcProps.TRACE_CONTEXT, trace);
  const bornHost = isBlank(String(sys.born_host ?? '')) ? peer : String(sys.born_host);
  if (!isBlank(bornHost)) props.set(GrpcProps.BORN_HOST, bornHost);
  let bornTimestamp = Date.now();
  if (sys.born_timestamp && Number(sys.born_timestamp.seconds ?? 0) > 0) {
    bornTimestamp = toMillis(sys.born_timestamp);
    props.set(GrpcProps.BORN_TIMESTAMP, String(bornTimestamp));
  }
  return { body, properties: props, sysFlag: buildSysFlag(m), bornTimestamp, uniqKey, messageGroup };
}

/**
 * Guava Hashing.consistentHash(long, int), which the proxy uses to pin a message group to a write queue
 * (SendMessageActivity.SendMessageQueueSelector): a 64-bit LCG walk from the key (Java String.hashCode,
 * sign-extended).
 */
export function consistentHash(input: number, buckets: number): number {
  const MASK = (1n << 64n) - 1n;
  let state = BigInt.asUintN(64, BigInt(input));
  let candidate = 0;
  for (;;) {
    state = (state * 2862933555777941757n + 1n) & MASK;
    const d = Number((state >> 33n) + 1n) / 2 ** 31;
    const next = Math.trunc((candidate + 1) / d);
    if (next >= 0 && next < buckets) candidate = next;
    else return candidate;
  }
}
