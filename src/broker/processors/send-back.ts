import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { HeaderReader, createResponse } from '../../remoting/command.js';
import type { ProcessorTable } from '../../remoting/dispatcher.js';
import type { BrokerContext } from '../context.js';
import { sendMessageBack } from '../send/send-back-service.js';

/**
 * CONSUMER_SEND_MSG_BACK (36): a consumer gives a message back; it goes to `%RETRY%<group>` with the next
 * delay level, or to `%DLQ%<group>` past the retry limit (Java AbstractSendMessageProcessor.consumerSendMsgBack).
 */
export function sendBackProcessors(ctx: BrokerContext): ProcessorTable {
  return [
    [RequestCode.CONSUMER_SEND_MSG_BACK, async (req) => {
      const h = new HeaderReader(req.extFields);
      const refused = await sendMessageBack(ctx, {
        offset: h.long('offset'),
        group: h.str('group'),
        delayLevel: h.optInt('delayLevel', 0) ?? 0,
        maxReconsumeTimes: h.optInt('maxReconsumeTimes'),
        requestVersion: req.version,
        originTopic: h.optStr('originTopic'),
      });
      return refused ? createResponse(refused.code, refused.remark) : createResponse(ResponseCode.SUCCESS);
    }],
  ];
}
