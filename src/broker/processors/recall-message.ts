// RECALL_MESSAGE (370, 5.3.x clients' DefaultMQProducer.recallMessage): Java RecallMessageProcessor over
// send/recall-service.ts. The answer carries the recalled message's UNIQ_KEY as msgId.
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { HeaderReader, type RemotingCommand, createResponse } from '../../remoting/command.js';
import type { ProcessorTable, RequestContext } from '../../remoting/dispatcher.js';
import type { BrokerContext } from '../context.js';
import { isRefusal } from '../outcome.js';
import { recallMessage } from '../send/recall-service.js';

async function handleRecall(ctx: BrokerContext, req: RemotingCommand, rc: RequestContext): Promise<RemotingCommand> {
  const h = new HeaderReader(req.extFields);
  const topic = h.str('topic');
  // Java checks no header field: a missing handle is an invalid one (ILLEGAL_OPERATION).
  const recallHandle = h.optStr('recallHandle') ?? '';
  const producerGroup = h.optStr('producerGroup');
  const outcome = await recallMessage(ctx, { topic, recallHandle, producerGroup, peer: rc.channel.remoteAddress });
  // Java adds the region to every answer of this processor.
  const res = isRefusal(outcome)
    ? createResponse(outcome.code, outcome.remark)
    : createResponse(ResponseCode.SUCCESS, undefined, { msgId: outcome.msgId });
  res.extFields.MSG_REGION = ctx.config.regionId;
  return res;
}

export function recallMessageProcessors(ctx: BrokerContext): ProcessorTable {
  return [[RequestCode.RECALL_MESSAGE, (req, rc) => handleRecall(ctx, req, rc)]];
}
