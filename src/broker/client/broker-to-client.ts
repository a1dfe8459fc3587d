// Requests the broker itself sends to clients (Java Broker2Client), over whatever carries the client: a TCP
// connection, or a gRPC stream that turns them into its own server commands.
import { RequestCode } from '../../common/request-code.js';
import { type RemotingCommand, createRequest } from '../../remoting/command.js';
import type { ClientChannel } from '../../remoting/dispatcher.js';

/** Tells one consumer that its group's membership changed (oneway; the client rebalances at once). */
export function notifyConsumerIdsChanged(channel: ClientChannel, consumerGroup: string): boolean {
  return channel.sendOneway(createRequest(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, { consumerGroup }));
}

/** Asks a producer of the group for a half message's state (oneway; it answers with END_TRANSACTION). */
export function checkTransactionState(channel: ClientChannel, header: Record<string, string>, record: Buffer): boolean {
  return channel.sendOneway(createRequest(RequestCode.CHECK_TRANSACTION_STATE, header, record));
}

/** Hands a consumer the offsets an admin reset its group to (oneway; Java resetOffset). */
export function resetClientOffset(channel: ClientChannel, header: Record<string, string>, body: Buffer): boolean {
  return channel.sendOneway(createRequest(RequestCode.RESET_CONSUMER_CLIENT_OFFSET, header, body));
}

/** MQVersion.Version.V3_1_8_SNAPSHOT.ordinal(): older clients cannot answer requests the broker sends them. */
export const MIN_CALLABLE_CLIENT_VERSION = 62;

/** Relays an admin request to a client and waits for its answer (Java callClient). */
export function callClient(
  channel: ClientChannel, code: number, extFields: Record<string, string>, body: Buffer | undefined, timeoutMs: number,
): Promise<RemotingCommand> {
  return channel.request(createRequest(code, { ...extFields }, body), timeoutMs);
}

/** Pushes a reply message to the requesting producer (Java ReplyMessageProcessor.pushReplyMessage). */
export function pushReplyMessage(
  channel: ClientChannel, header: Record<string, string>, body: Buffer | undefined, timeoutMs: number,
): Promise<RemotingCommand> {
  return channel.request(createRequest(RequestCode.PUSH_REPLY_MESSAGE_TO_CLIENT, header, body), timeoutMs);
}
