// POP_MESSAGE (200050): decode → PopService.pop → encode (Java PopMessageProcessor). Every field of
// PopMessageResponseHeader is written on every answer, errors included: Java writes its primitives always and its
// decoders (the cluster proxy's too) insist on them.
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { HeaderReader, type RemotingCommand, createResponse } from '../../remoting/command.js';
import type { ProcessorTable, RequestContext } from '../../remoting/dispatcher.js';
import { isRefusal } from '../outcome.js';
import type { PopRequest, PopResult, PopService } from '../pop/pop-service.js';

function readPopHeader(req: RemotingCommand, peer: string): PopRequest {
  const h = new HeaderReader(req.extFields);
  const born = h.optLong('bornTime', 0) ?? 0;
  return {
    consumerGroup: h.str('consumerGroup'),
    topic: h.str('topic'),
    queueId: h.int('queueId'),
    maxMsgNums: h.int('maxMsgNums'),
    invisibleTime: h.long('invisibleTime'),
    pollTime: h.long('pollTime'),
    // Java fills an absent or "0" bornTime with now before decoding
    bornTime: born > 0 ? born : Date.now(),
    initMode: h.int('initMode'),
    expressionType: h.optStr('expType'),
    expression: h.optStr('exp'),
    order: h.bool('order', false),
    attemptId: h.optStr('attemptId'),
    peer,
  };
}

const EMPTY_HEADER = { popTime: '0', invisibleTime: '0', reviveQid: '0', restNum: '0' };

function encode(result: PopResult): RemotingCommand | null {
  if (result.status === 'ABANDONED') return null;
  const code = result.status === 'FOUND' ? ResponseCode.SUCCESS
    : result.status === 'POLLING_FULL' ? ResponseCode.POLLING_FULL : ResponseCode.POLLING_TIMEOUT;
  const ext: Record<string, string> = {
    popTime: String(result.popTime),
    invisibleTime: String(result.invisibleTime),
    reviveQid: String(result.reviveQid),
    restNum: String(result.restNum),
    startOffsetInfo: result.startOffsetInfo,
    msgOffsetInfo: result.msgOffsetInfo,
  };
  if (result.orderCountInfo !== undefined) ext.orderCountInfo = result.orderCountInfo;
  const res = createResponse(code, result.status === 'FOUND' ? 'FOUND' : 'NO_MESSAGE_IN_QUEUE', ext);
  if (code === ResponseCode.SUCCESS) res.bodyParts = result.messages.map((m) => m.record);
  return res;
}

export function popMessageProcessors(pop: PopService): ProcessorTable {
  return [
    [RequestCode.POP_MESSAGE, async (req: RemotingCommand, rc: RequestContext) => {
      const outcome = await pop.pop(readPopHeader(req, rc.channel.remoteAddress), {
        isClosed: () => rc.channel.isClosed,
        onSuspended: () => {
          req.suspended = true;
        },
      });
      if (isRefusal(outcome)) return createResponse(outcome.code, outcome.remark || undefined, { ...EMPTY_HEADER });
      return encode(outcome);
    }],
  ];
}
