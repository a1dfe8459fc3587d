// NOTIFICATION (200054) and POLLING_INFO (200055): decode → PopService.notification / pollingInfo → encode (Java
// NotificationProcessor, PollingInfoProcessor). No stock client calls them; MQClientAPIExt.notification does.
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { HeaderReader, createResponse } from '../../remoting/command.js';
import type { ProcessorTable } from '../../remoting/dispatcher.js';
import { isRefusal } from '../outcome.js';
import type { PopService } from '../pop/pop-service.js';

export function popNotificationProcessors(pop: PopService): ProcessorTable {
  return [
    [RequestCode.NOTIFICATION, async (req, rc) => {
      const h = new HeaderReader(req.extFields);
      const born = h.optLong('bornTime', 0) ?? 0;
      const outcome = await pop.notification({
        consumerGroup: h.str('consumerGroup'),
        topic: h.str('topic'),
        queueId: h.int('queueId'),
        pollTime: h.long('pollTime'),
        bornTime: born > 0 ? born : Date.now(),
        order: h.bool('order', false),
        attemptId: h.optStr('attemptId'),
        peer: rc.channel.remoteAddress,
      }, {
        isClosed: () => rc.channel.isClosed,
        onSuspended: () => {
          req.suspended = true;
        },
      });
      if (isRefusal(outcome)) return createResponse(outcome.code, outcome.remark || undefined, { hasMsg: 'false', pollingFull: 'false' });
      return createResponse(ResponseCode.SUCCESS, undefined, { hasMsg: String(outcome.hasMsg), pollingFull: String(outcome.pollingFull) });
    }],
    [RequestCode.POLLING_INFO, (req, rc) => {
      const h = new HeaderReader(req.extFields);
      const outcome = pop.pollingInfo({
        consumerGroup: h.str('consumerGroup'), topic: h.str('topic'), queueId: h.int('queueId'), peer: rc.channel.remoteAddress,
      });
      if (isRefusal(outcome)) return createResponse(outcome.code, outcome.remark || undefined, { pollingNum: '0' });
      return createResponse(ResponseCode.SUCCESS, undefined, { pollingNum: String(outcome.pollingNum) });
    }],
  ];
}
