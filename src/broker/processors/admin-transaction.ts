// RESUME_CHECK_HALF_MESSAGE (323, MQAdminExt.resumeCheckHalfMessage): a transaction whose producer did not answer
// transactionCheckMax check-backs was parked in TRANS_CHECK_MAX_TIME_TOPIC; this puts that copy back on the half
// queue with its check count at 0, so the broker checks it again. Java: AdminBrokerProcessor.resumeCheckHalfMessage.
import { MessageConst, parseProperties } from '../../common/message-properties.js';
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { HeaderReader, type RemotingCommand, createResponse } from '../../remoting/command.js';
import type { ProcessorTable } from '../../remoting/dispatcher.js';
import { decodeRecord } from '../../store/index.js';
import type { BrokerContext } from '../context.js';
import { decodeOffsetMessageId } from '../message-id.js';
import { messageFromRecord } from '../stored-message.js';
import { HALF_TOPIC } from '../transaction/transactional-message-util.js';

/** Java's remark for every failure before the put (a bad id, no message there: it catches the exception). */
const NOT_RESUMED = `Exception was thrown when putting message back to ${HALF_TOPIC}.`;

/**
 * `msgId` is the offset msgId of the parked copy (the admin tool looks the message up by the id it was given and
 * sends its offset msgId). Java re-puts whatever record lies there; we refuse a record that is not a transaction's
 * half message (no REAL_TOPIC or PGROUP), which Java would put on the half queue to be checked with nobody to ask.
 */
async function resumeCheckHalfMessage(ctx: BrokerContext, req: RemotingCommand): Promise<RemotingCommand> {
  const msgId = new HeaderReader(req.extFields).str('msgId');
  const decoded = decodeOffsetMessageId(msgId);
  if (!decoded) return createResponse(ResponseCode.SYSTEM_ERROR, `${NOT_RESUMED} (${msgId} is not an offset msgId)`);
  const raw = await ctx.store.lookMessageByOffset(decoded.commitLogOffset);
  if (!raw) return createResponse(ResponseCode.SYSTEM_ERROR, `${NOT_RESUMED} (no message at offset ${decoded.commitLogOffset})`);
  const record = decodeRecord(raw);
  const props = parseProperties(record.propertiesString);
  if (!props.get(MessageConst.REAL_TOPIC) || !props.get(MessageConst.PRODUCER_GROUP)) {
    return createResponse(ResponseCode.SYSTEM_ERROR, `${NOT_RESUMED} (${msgId} is not a transaction's half message)`);
  }
  props.set(MessageConst.TRANSACTION_CHECK_TIMES, '0');
  const res = await ctx.store.putMessage(messageFromRecord(record, HALF_TOPIC, 0, props, { preparedTransactionOffset: 0 }));
  if (res.status !== 'PUT_OK' && res.status !== 'FLUSH_DISK_TIMEOUT') {
    return createResponse(ResponseCode.SYSTEM_ERROR, `Put message back to ${HALF_TOPIC} failed.`);
  }
  ctx.logger.info({ msgId, realTopic: props.get(MessageConst.REAL_TOPIC) }, `half message put back to ${HALF_TOPIC}`);
  return createResponse(ResponseCode.SUCCESS);
}

export function adminTransactionProcessors(ctx: BrokerContext): ProcessorTable {
  return [[RequestCode.RESUME_CHECK_HALF_MESSAGE, (req) => resumeCheckHalfMessage(ctx, req)]];
}
