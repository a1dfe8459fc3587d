// Admin requests the broker relays to one consumer client and whose reply it passes back unchanged:
// GET_CONSUMER_RUNNING_INFO (307) and CONSUME_MESSAGE_DIRECTLY (309).
// Java: broker/processor/AdminBrokerProcessor.java (getConsumerRunningInfo, consumeMessageDirectly, callConsumer),
// broker/client/net/Broker2Client.callClient.
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { HeaderReader, type RemotingCommand, createResponse } from '../../remoting/command.js';
import type { ProcessorTable } from '../../remoting/dispatcher.js';
import type { BrokerContext } from '../context.js';
import { MIN_CALLABLE_CLIENT_VERSION, callClient } from '../client/broker-to-client.js';
import { decodeOffsetMessageId } from '../message-id.js';

/** Java Broker2Client.callClient: invokeSync(channel, request, 10000). */
export const CALL_CLIENT_TIMEOUT_MS = 10_000;

/**
 * Forwards `code` with the request's header fields and body to the consumer `clientId` of `group` and returns
 * the client's response as ours (Java AdminBrokerProcessor.callConsumer).
 */
export async function callConsumer(
  ctx: BrokerContext,
  code: number,
  req: RemotingCommand,
  group: string,
  clientId: string,
  extFields: Record<string, string> = req.extFields,
  body: Buffer | undefined = req.body,
): Promise<RemotingCommand> {
  const client = ctx.consumerManager.findChannel(group, clientId);
  if (!client) return createResponse(ResponseCode.SYSTEM_ERROR, `The Consumer <${group}> <${clientId}> not online`);
  if (client.version < MIN_CALLABLE_CLIENT_VERSION) {
    return createResponse(
      ResponseCode.SYSTEM_ERROR,
      `The Consumer <${clientId}> Version <${client.version}> too low to finish, please upgrade it to V3_1_8_SNAPSHOT`,
    );
  }
  try {
    return await callClient(client.channel, code, extFields, body, CALL_CLIENT_TIMEOUT_MS);
  } catch (err) {
    const msg = (err as Error).message;
    if (/timed out/.test(msg)) {
      // ali-ons never answers broker-initiated requests, so its consumers end up here.
      return createResponse(ResponseCode.CONSUME_MSG_TIMEOUT, `consumer <${group}> <${clientId}> Timeout: ${msg}`);
    }
    return createResponse(ResponseCode.SYSTEM_ERROR, `invoke consumer <${group}> <${clientId}> Exception: ${msg}`);
  }
}

function getConsumerRunningInfo(ctx: BrokerContext, req: RemotingCommand): Promise<RemotingCommand> {
  const h = new HeaderReader(req.extFields);
  return callConsumer(ctx, RequestCode.GET_CONSUMER_RUNNING_INFO, req, h.str('consumerGroup'), h.str('clientId'));
}

/** The broker loads the record named by the offset msgId and hands it to the client as the body. */
async function consumeMessageDirectly(ctx: BrokerContext, req: RemotingCommand): Promise<RemotingCommand> {
  const h = new HeaderReader(req.extFields);
  const group = h.str('consumerGroup');
  const clientId = h.optStr('clientId') ?? '';
  const msgId = h.optStr('msgId') ?? '';
  const decoded = decodeOffsetMessageId(msgId);
  if (!decoded) return createResponse(ResponseCode.SYSTEM_ERROR, `msgId ${msgId} is not an offset message id`);
  const record = await ctx.store.lookMessageByOffset(decoded.commitLogOffset);
  if (!record) {
    return createResponse(ResponseCode.SYSTEM_ERROR, `can not find message by the offset message id ${msgId} (commit log offset ${decoded.commitLogOffset})`);
  }
  const extFields = { ...req.extFields, brokerName: ctx.config.brokerName };
  return callConsumer(ctx, RequestCode.CONSUME_MESSAGE_DIRECTLY, req, group, clientId, extFields, record);
}

export function adminConsumerRelayProcessors(ctx: BrokerContext): ProcessorTable {
  return [
    [RequestCode.GET_CONSUMER_RUNNING_INFO, (req) => getConsumerRunningInfo(ctx, req)],
    [RequestCode.CONSUME_MESSAGE_DIRECTLY, (req) => consumeMessageDirectly(ctx, req)],
  ];
}
