// A stored record as an apache.rocketmq.v2.Message (Java proxy grpc/v2/common/GrpcConverter.buildMessage): user
// properties are the non-reserved ones, the reserved ones become system properties; the body travels as sent
// (decompressed when a remoting producer compressed it), with an MD5 digest (Node dereferences body_digest
// unconditionally and compares CRC32 as a decimal string, so MD5 is the one digest every client checks alike).
import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { MessageConst, parseProperties } from '../common/message-properties.js';
import { type DecodedRecord, type HostAddress, SysFlag } from '../store/index.js';
import { fromMillis } from './validators.js';

/** MessageConst properties the proxy never hands out as user properties (Java MessageConst.STRING_HASH_SET). */
export const RESERVED_PROPERTY_KEYS: ReadonlySet<string> = new Set([
  'TRACE_ON', 'MSG_REGION', 'KEYS', 'TAGS', 'WAIT', 'DELAY', 'RETRY_TOPIC', 'REAL_TOPIC', 'REAL_QID', 'TRAN_MSG', 'PGROUP',
  'MIN_OFFSET', 'MAX_OFFSET', 'BUYER_ID', 'ORIGIN_MESSAGE_ID', 'TRANSFER_FLAG', 'CORRECTION_FLAG', 'MQ2_FLAG',
  'RECONSUME_TIME', 'UNIQ_KEY', 'MAX_RECONSUME_TIMES', 'CONSUME_START_TIME', 'POP_CK', 'POP_CK_OFFSET', '1ST_POP_TIME',
  'TRAN_PREPARED_QUEUE_OFFSET', 'DUP_INFO', 'EXTEND_UNIQ_INFO', 'INSTANCE_ID', 'CORRELATION_ID', 'REPLY_TO_CLIENT', 'TTL',
  'ARRIVE_TIME', 'PUSH_REPLY_TIME', 'CLUSTER', 'MSG_TYPE', 'INNER_MULTI_QUEUE_OFFSET', 'TIMER_DELAY_MS', 'TIMER_DELAY_SEC',
  'TIMER_DELIVER_MS', 'TIMER_ENQUEUE_MS', 'TIMER_DEQUEUE_MS', 'TIMER_ROLL_TIMES', 'TIMER_OUT_MS', 'TIMER_DEL_UNIQKEY',
  'TIMER_DELAY_LEVEL', '__BORNHOST', 'BORN_TIMESTAMP', 'DLQ_ORIGIN_TOPIC', 'DLQ_ORIGIN_MESSAGE_ID', '__CRC32#',
]);

/** Properties the gRPC endpoint writes or reads that MessageConst (common) does not name yet. */
export const GrpcProps = {
  SHARDING_KEY: '__SHARDINGKEY',
  TRACE_CONTEXT: 'TRACE_CONTEXT',
  BORN_HOST: '__BORNHOST',
  BORN_TIMESTAMP: 'BORN_TIMESTAMP',
  DLQ_ORIGIN_TOPIC: 'DLQ_ORIGIN_TOPIC',
  DLQ_ORIGIN_MESSAGE_ID: 'DLQ_ORIGIN_MESSAGE_ID',
  POP_CK: 'POP_CK',
} as const;

export type GrpcMessageType = 'NORMAL' | 'FIFO' | 'DELAY' | 'TRANSACTION';

/** Java TopicMessageType.parseFromMessageProperty (GrpcConverter leaves TIMER_DELAY_MS out; so do we on delivery). */
export function messageTypeOf(props: ReadonlyMap<string, string>, withDelayMs = true): GrpcMessageType {
  if (props.get(MessageConst.TRANSACTION_PREPARED) === 'true') return 'TRANSACTION';
  if (
    props.has(MessageConst.DELAY_TIME_LEVEL) || props.has(MessageConst.TIMER_DELIVER_MS) || props.has(MessageConst.TIMER_DELAY_SEC) ||
    (withDelayMs && props.has(MessageConst.TIMER_DELAY_MS))
  ) {
    return 'DELAY';
  }
  if (props.has(GrpcProps.SHARDING_KEY)) return 'FIFO';
  return 'NORMAL';
}

/** Java NetworkUtil.socketAddress2String: `ip:port` (IPv6 without brackets). */
export function hostString(h: HostAddress, withPort = true): string {
  let ip: string;
  if (h.ip.length === 4) ip = [...h.ip].join('.');
  else ip = (h.ip.toString('hex').match(/.{4}/g) ?? []).map((g) => g.replace(/^0{1,3}/, '')).join(':');
  return withPort ? `${ip}:${h.port}` : ip;
}

const COMPRESSION_ZLIB_OR_DEFAULT = new Set([0, 0x300]);

/**
 * The body as the producer meant it: remoting producers zlib-compress bodies ≥ 4 KiB (sysFlag COMPRESSED with
 * compression type 0/ZLIB), a gRPC GZIP body is stored compressed as sent. Both are inflated here and delivered as
 * IDENTITY (the official cluster proxy decodes them the same way; local mode hands zlib bytes out labelled GZIP,
 * which Node cannot read). LZ4/ZSTD bodies are passed on as stored, labelled GZIP.
 */
export function deliverableBody(rec: DecodedRecord): { body: Buffer; encoding: 'IDENTITY' | 'GZIP' } {
  if ((rec.sysFlag & SysFlag.COMPRESSED) === 0) return { body: rec.body, encoding: 'IDENTITY' };
  const type = rec.sysFlag & SysFlag.COMPRESSION_TYPE_MASK;
  if (COMPRESSION_ZLIB_OR_DEFAULT.has(type)) {
    try {
      return { body: zlib.unzipSync(rec.body), encoding: 'IDENTITY' }; // zlib or gzip, told apart by the header
    } catch {
      // not deflate data after all: hand it on as stored
    }
  }
  return { body: rec.body, encoding: 'GZIP' };
}

export interface DeliveryExtras {
  /** The topic the consumer asked for (a POP retry copy is delivered under it). */
  topic?: string;
  receiptHandle?: string;
  /** reconsumeTimes to report (FIFO pops report the order count). */
  reconsumeTimes?: number;
  /** The decoded properties when the caller has them already. */
  props?: Map<string, string>;
}

/** The Message a consumer receives (and a producer's checker sees on a transaction check-back). */
export function recordToMessage(rec: DecodedRecord, extras: DeliveryExtras = {}): Record<string, unknown> {
  const props = extras.props ?? parseProperties(rec.propertiesString);
  const user: Record<string, string> = {};
  for (const [k, v] of props) if (!RESERVED_PROPERTY_KEYS.has(k)) user[k] = v;
  const { body, encoding } = deliverableBody(rec);
  const sys: Record<string, unknown> = {
    keys: props.get(MessageConst.KEYS)?.split(' ') ?? [],
    message_id: props.get(MessageConst.UNIQ_CLIENT_MESSAGE_ID_KEYIDX) ?? offsetMessageIdOf(rec),
    body_digest: { type: 'MD5', checksum: crypto.createHash('md5').update(body).digest('hex').toUpperCase() },
    body_encoding: encoding,
    message_type: messageTypeOf(props, false),
    born_timestamp: fromMillis(rec.bornTimestamp),
    born_host: props.get(GrpcProps.BORN_HOST) || hostString(rec.bornHost, false),
    store_timestamp: fromMillis(rec.storeTimestamp),
    store_host: hostString(rec.storeHost),
    queue_id: rec.queueId,
    queue_offset: rec.queueOffset,
    delivery_attempt: (extras.reconsumeTimes ?? rec.reconsumeTimes) + 1,
  };
  const tag = props.get(MessageConst.TAGS);
  if (tag !== undefined) sys.tag = tag;
  const delaySec = props.get(MessageConst.TIMER_DELAY_SEC);
  const deliverMs = props.get(MessageConst.TIMER_DELIVER_MS);
  if (delaySec !== undefined && /^\d+$/.test(delaySec)) sys.delivery_timestamp = fromMillis(Date.now() + Number(delaySec) * 1000);
  else if (deliverMs !== undefined && /^\d+$/.test(deliverMs)) sys.delivery_timestamp = fromMillis(Number(deliverMs));
  const group = props.get(GrpcProps.SHARDING_KEY);
  if (group !== undefined) sys.message_group = group;
  const handle = extras.receiptHandle ?? props.get(GrpcProps.POP_CK);
  if (handle !== undefined) sys.receipt_handle = handle;
  const trace = props.get(GrpcProps.TRACE_CONTEXT);
  if (trace !== undefined) sys.trace_context = trace;
  const dlqTopic = props.get(GrpcProps.DLQ_ORIGIN_TOPIC);
  const dlqId = props.get(GrpcProps.DLQ_ORIGIN_MESSAGE_ID);
  if (dlqTopic !== undefined && dlqId !== undefined) sys.dead_letter_queue = { topic: dlqTopic, message_id: dlqId };
  return {
    topic: { name: extras.topic ?? rec.topic, resource_namespace: '' },
    user_properties: user,
    system_properties: sys,
    body,
  };
}

/** Java MessageDecoder.createMessageId from the record's store host and commit-log offset. */
function offsetMessageIdOf(rec: DecodedRecord): string {
  const buf = Buffer.allocUnsafe(rec.storeHost.ip.length + 12);
  rec.storeHost.ip.copy(buf, 0);
  buf.writeInt32BE(rec.storeHost.port, rec.storeHost.ip.length);
  buf.writeBigInt64BE(BigInt(rec.commitLogOffset), rec.storeHost.ip.length + 4);
  return buf.toString('hex').toUpperCase();
}
