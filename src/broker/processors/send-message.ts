import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import {
  HeaderReader, type RemotingCommand, createResponse, headerBool, headerInt, headerOptInt, headerOptLong, headerStr,
} from '../../remoting/command.js';
import { type ProcessorTable, type RequestContext, sameProcessor } from '../../remoting/dispatcher.js';
import type { BrokerContext } from '../context.js';
import { offsetMessageIds } from '../message-id.js';
import { isRefusal } from '../outcome.js';
import type { SendHeader } from '../send/message-checks.js';
import { type BatchItem, type SendRequest, type Stored, sendMessage } from '../send/send-service.js';
import { SystemTopic } from '../topic/topic-config.js';
import { putResultToResponse } from './put-status.js';

/** Inner messages one SEND_BATCH_MESSAGE may carry; Java has no count cap, only the 4 MiB size cap. */
const MAX_BATCH_MESSAGES = 10_000;

/** Reads either header style: full names (10, Go) or the V2 letters (310/320, Java and ali-ons). */
export function readSendHeader(req: RemotingCommand): SendHeader {
  const fields = req.extFields;
  if (req.code !== RequestCode.SEND_MESSAGE && fields.b !== undefined && fields.topic === undefined) {
    return readSendHeaderV2(fields);
  }
  const h = new HeaderReader(fields);
  return {
    producerGroup: h.str('producerGroup'),
    topic: h.str('topic'),
    defaultTopic: h.optStr('defaultTopic') ?? SystemTopic.AUTO_CREATE_TOPIC_KEY,
    defaultTopicQueueNums: h.optInt('defaultTopicQueueNums', 4) ?? 4,
    queueId: h.int('queueId'),
    sysFlag: h.optInt('sysFlag', 0) ?? 0,
    bornTimestamp: h.optLong('bornTimestamp') ?? Date.now(),
    flag: h.optInt('flag', 0) ?? 0,
    properties: h.optStr('properties') ?? '',
    reconsumeTimes: h.optInt('reconsumeTimes', 0) ?? 0,
    maxReconsumeTimes: h.optInt('maxReconsumeTimes'),
    batch: h.bool('batch'),
  };
}

/**
 * SendMessageRequestHeaderV2: each field under its letter (a producerGroup ... m batch; n brokerName is not read
 * here), or under its full name when the letter is absent. One property access per field: the shared reader's
 * keyed lookups (two a field, megamorphic) were ~3 % of the server's CPU in the async row.
 */
function readSendHeaderV2(f: Record<string, string>): SendHeader {
  return {
    producerGroup: headerStr('producerGroup', f.a ?? f.producerGroup),
    topic: headerStr('topic', f.b ?? f.topic),
    defaultTopic: f.c ?? f.defaultTopic ?? SystemTopic.AUTO_CREATE_TOPIC_KEY,
    defaultTopicQueueNums: headerOptInt('defaultTopicQueueNums', f.d ?? f.defaultTopicQueueNums, 4) ?? 4,
    queueId: headerInt('queueId', f.e ?? f.queueId),
    sysFlag: headerOptInt('sysFlag', f.f ?? f.sysFlag, 0) ?? 0,
    bornTimestamp: headerOptLong('bornTimestamp', f.g ?? f.bornTimestamp) ?? Date.now(),
    flag: headerOptInt('flag', f.h ?? f.flag, 0) ?? 0,
    properties: f.i ?? f.properties ?? '',
    reconsumeTimes: headerOptInt('reconsumeTimes', f.j ?? f.reconsumeTimes, 0) ?? 0,
    maxReconsumeTimes: headerOptInt('maxReconsumeTimes', f.l ?? f.maxReconsumeTimes),
    batch: headerBool(f.m ?? f.batch),
  };
}

export function sendMessageProcessors(ctx: BrokerContext): ProcessorTable {
  const processor = (req: RemotingCommand, rc: RequestContext) => handleSend(ctx, req, rc);
  return sameProcessor([RequestCode.SEND_MESSAGE, RequestCode.SEND_MESSAGE_V2, RequestCode.SEND_BATCH_MESSAGE], processor);
}

const EMPTY_BODY = Buffer.alloc(0);

/** Decode the frame, send, encode the outcome (Java SendMessageProcessor). */
async function handleSend(ctx: BrokerContext, req: RemotingCommand, rc: RequestContext): Promise<RemotingCommand> {
  const header = readSendHeader(req);
  const isBatch = req.code === RequestCode.SEND_BATCH_MESSAGE;
  // A single message's body received in pieces stays pieces down to the commit log (no join copy).
  // (SEND_BATCH_MESSAGE is not registered for pieces: RequestDispatcher.keepBodyParts joins its body.)
  const bodyParts = req.receivedBodyParts;
  const body = req.body ?? EMPTY_BODY;
  const batch = isBatch ? decodeBatchBody(body) : undefined;
  const sendReq: SendRequest = { header, body, bodyParts, batch, requestVersion: req.version, peer: rc.channel.remoteAddress };
  const outcome = await sendMessage(ctx, sendReq);
  if (isRefusal(outcome)) return createResponse(outcome.code, outcome.remark);
  return encodeStored(ctx, outcome, header.properties);
}

/** SEND_OK (or stored-but-slow) answers carry the offset msgIds, queue and offset; others only the status. */
function encodeStored(ctx: BrokerContext, stored: Stored, properties: string): RemotingCommand {
  const { result } = stored;
  const res = putResultToResponse(result, ctx.config.haSemantics);
  if (res.code === ResponseCode.SUCCESS || isStoredButSlow(res.code)) {
    ctx.stats.msgPutTotal += result.messageCount;
    ctx.stats.items.countPut(ctx.config.brokerClusterName, stored.storedTopic, result.messageCount, result.wroteBytes);
    ctx.stats.metrics?.messagesStored(stored.storedTopic, properties, result.messageCount, result.wroteBytes);
    if (stored.transactionId !== undefined) ctx.stats.metrics?.halfMessageStored(stored.storedTopic);
    res.extFields = {
      msgId: offsetMessageIds(stored.storeHost, result.commitLogOffsets),
      queueId: String(stored.queueId),
      queueOffset: String(result.queueOffset),
      MSG_REGION: ctx.config.regionId,
      TRACE_ON: String(ctx.config.traceOn),
    };
    // 5.3.3 answers a single message's UNIQ_KEY as transactionId on every send (4.9.8 on none; its clients read it
    // when present, and use it only for half messages); batches have none.
    const transactionId = stored.transactionId ?? stored.uniqKey;
    if (transactionId) res.extFields.transactionId = transactionId;
    if (stored.recallHandle) res.extFields.recallHandle = stored.recallHandle;
  }
  return res;
}

function isStoredButSlow(code: number): boolean {
  return code === ResponseCode.FLUSH_DISK_TIMEOUT || code === ResponseCode.FLUSH_SLAVE_TIMEOUT || code === ResponseCode.SLAVE_NOT_AVAILABLE;
}

/**
 * Batch body (Java MessageDecoder.encodeMessages): repeated TOTALSIZE, MAGICCODE, BODYCRC, FLAG,
 * BODY (int32 length + bytes), PROPERTIES (int16 length + string). Returns a remark when malformed.
 */
export function decodeBatchBody(body: Buffer): BatchItem[] | string {
  const out: BatchItem[] = [];
  let pos = 0;
  while (pos < body.length) {
    if (out.length >= MAX_BATCH_MESSAGES) return `batch carries more than ${MAX_BATCH_MESSAGES} messages`;
    if (pos + 20 > body.length) return `batch body truncated at byte ${pos}`;
    const totalSize = body.readInt32BE(pos);
    if (totalSize < 22 || pos + totalSize > body.length) return `batch message at byte ${pos} has an invalid size ${totalSize}`;
    const flag = body.readInt32BE(pos + 12);
    const bodyLen = body.readInt32BE(pos + 16);
    let p = pos + 20;
    if (bodyLen < 0 || p + bodyLen + 2 > pos + totalSize) return `batch message at byte ${pos} has an invalid body length ${bodyLen}`;
    const msgBody = body.subarray(p, p + bodyLen);
    p += bodyLen;
    const propLen = body.readInt16BE(p);
    p += 2;
    if (propLen < 0 || p + propLen > pos + totalSize) return `batch message at byte ${pos} has an invalid properties length ${propLen}`;
    const properties = body.toString('utf8', p, p + propLen);
    out.push({ flag, body: msgBody, properties });
    pos += totalSize;
  }
  if (out.length === 0) return 'batch body carries no message';
  return out;
}
