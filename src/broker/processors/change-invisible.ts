// CHANGE_MESSAGE_INVISIBLETIME (200053): decode → PopService.changeInvisibleTime → encode (Java
// ChangeInvisibleTimeProcessor). popTime, invisibleTime and reviveQid are written on every answer (as "0" on errors).
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { HeaderReader, createResponse } from '../../remoting/command.js';
import type { ProcessorTable } from '../../remoting/dispatcher.js';
import { isRefusal } from '../outcome.js';
import type { PopService } from '../pop/pop-service.js';

export function changeInvisibleProcessors(pop: PopService): ProcessorTable {
  return [
    [RequestCode.CHANGE_MESSAGE_INVISIBLETIME, async (req, rc) => {
      const h = new HeaderReader(req.extFields);
      const outcome = await pop.changeInvisibleTime({
        consumerGroup: h.str('consumerGroup'),
        topic: h.str('topic'),
        queueId: h.int('queueId'),
        extraInfo: h.str('extraInfo'),
        offset: h.long('offset'),
        invisibleTime: h.long('invisibleTime'),
        peer: rc.channel.remoteAddress,
      });
      if (isRefusal(outcome)) {
        return createResponse(outcome.code, outcome.remark || undefined, { popTime: '0', invisibleTime: '0', reviveQid: '0' });
      }
      return createResponse(ResponseCode.SUCCESS, undefined, {
        popTime: String(outcome.popTime), invisibleTime: String(outcome.invisibleTime), reviveQid: String(outcome.reviveQid),
      });
    }],
  ];
}
