import { encodeProperties, parseProperties } from '../../common/message-properties.js';
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { type RemotingCommand, createResponse } from '../../remoting/command.js';
import { type ProcessorTable, type RequestContext, sameProcessor } from '../../remoting/dispatcher.js';
import type { BrokerContext } from '../context.js';
import { pushReplyMessage } from '../client/broker-to-client.js';
import { createOffsetMessageId, parseHostAddress } from '../message-id.js';
import { buildMessage, checkMessage, checkSizes } from '../send/message-checks.js';
import { readSendHeader } from './send-message.js';

/**
 * How long the requester's client gets to accept a pushed reply: Java Broker2Client.callClient waits 10 s. A shorter
 * wait answers the responder SYSTEM_ERROR while the first push may still arrive; its send retry then pushes the same
 * reply twice, and a requester that handles both at once runs its callback twice.
 */
const PUSH_REPLY_TIMEOUT_MS = 10_000;
const PROPERTY_REPLY_TO_CLIENT = 'REPLY_TO_CLIENT';
const PROPERTY_PUSH_REPLY_TIME = 'PUSH_REPLY_TIME';

/**
 * Request-reply (Java ReplyMessageProcessor): SEND_REPLY_MESSAGE (324) / _V2 (325) from the responder is pushed
 * straight to the requesting client as PUSH_REPLY_MESSAGE_TO_CLIENT (326), found by REPLY_TO_CLIENT among the
 * producer connections, then stored on `<cluster>_REPLY_TOPIC` like Java's storeReplyMessageEnable=true.
 */
export function sendReplyProcessors(ctx: BrokerContext): ProcessorTable {
  const processor = (req: RemotingCommand, rc: RequestContext) => handleReply(ctx, req, rc);
  return sameProcessor([RequestCode.SEND_REPLY_MESSAGE, RequestCode.SEND_REPLY_MESSAGE_V2], processor);
}

async function handleReply(ctx: BrokerContext, req: RemotingCommand, rc: RequestContext): Promise<RemotingCommand> {
  const header = readSendHeader(req);
  const checked = checkMessage(ctx, header, rc.channel.remoteAddress);
  if ('code' in checked) return createResponse(checked.code, checked.remark);
  const body = req.body ?? Buffer.alloc(0);
  const tooBig = checkSizes(ctx, body.length, header.properties);
  if (tooBig) return createResponse(tooBig.code, tooBig.remark);
  const queueId = header.queueId >= 0 ? header.queueId : Math.floor(Math.random() * Math.max(1, checked.writeQueueNums));
  const extFields = { MSG_REGION: ctx.config.regionId, TRACE_ON: String(ctx.config.traceOn) };

  const props = parseProperties(header.properties);
  const senderId = props.get(PROPERTY_REPLY_TO_CLIENT);
  if (!senderId) {
    return createResponse(ResponseCode.SYSTEM_ERROR, `reply message properties[${PROPERTY_REPLY_TO_CLIENT}] is null`, extFields);
  }
  const channel = ctx.producerManager.findChannel(senderId);
  if (!channel) {
    return createResponse(ResponseCode.SYSTEM_ERROR, `push reply message fail, channel of <${senderId}> not found.`, extFields);
  }
  props.set(PROPERTY_PUSH_REPLY_TIME, String(Date.now()));
  const pushHeader = {
    producerGroup: header.producerGroup,
    topic: header.topic,
    defaultTopic: header.defaultTopic,
    defaultTopicQueueNums: String(header.defaultTopicQueueNums),
    queueId: String(header.queueId),
    sysFlag: String(header.sysFlag),
    bornTimestamp: String(header.bornTimestamp),
    flag: String(header.flag),
    properties: encodeProperties(props),
    reconsumeTimes: String(header.reconsumeTimes),
    unitMode: 'false',
    bornHost: rc.channel.remoteAddress,
    storeHost: ctx.brokerAddr(),
    storeTimestamp: String(Date.now()),
  };
  try {
    const res = await pushReplyMessage(channel, pushHeader, body, PUSH_REPLY_TIMEOUT_MS);
    if (res.code !== ResponseCode.SUCCESS) {
      return createResponse(ResponseCode.SYSTEM_ERROR, `push reply message to ${senderId} fail: ${res.remark ?? res.code}`, extFields);
    }
  } catch (err) {
    return createResponse(ResponseCode.SYSTEM_ERROR, `push reply message to ${senderId} fail: ${(err as Error).message}`, extFields);
  }

  const storeHost = parseHostAddress(ctx.brokerAddr());
  const msg = buildMessage(ctx, header, queueId, header.flag, body, header.properties, parseHostAddress(rc.channel.remoteAddress), storeHost);
  const result = await ctx.store.putMessage(msg);
  const stored = result.status === 'PUT_OK' || result.status === 'FLUSH_DISK_TIMEOUT';
  // Java answers msgId "0" / offset 0 when only the push worked, the stored record's ids otherwise.
  return createResponse(ResponseCode.SUCCESS, undefined, {
    ...extFields,
    msgId: stored ? createOffsetMessageId(storeHost, result.commitLogOffset) : '0',
    queueId: String(queueId),
    queueOffset: String(stored ? result.queueOffset : 0),
  });
}

