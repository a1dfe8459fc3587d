// ACK_MESSAGE (200051) and BATCH_ACK_MESSAGE (200151): decode → PopService.ack / batchAck (Java AckMessageProcessor).
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { HeaderReader, createResponse } from '../../remoting/command.js';
import type { ProcessorTable } from '../../remoting/dispatcher.js';
import type { Refusal } from '../outcome.js';
import type { PopService } from '../pop/pop-service.js';
import { decodeBatchAckBody } from '../pop/pop-records.js';

const answer = (refused: Refusal | undefined) =>
  refused ? createResponse(refused.code, refused.remark || undefined) : createResponse(ResponseCode.SUCCESS);

export function ackMessageProcessors(pop: PopService): ProcessorTable {
  return [
    [RequestCode.ACK_MESSAGE, async (req, rc) => {
      const h = new HeaderReader(req.extFields);
      return answer(await pop.ack({
        consumerGroup: h.str('consumerGroup'),
        topic: h.str('topic'),
        queueId: h.int('queueId'),
        extraInfo: h.str('extraInfo'),
        offset: h.long('offset'),
        peer: rc.channel.remoteAddress,
      }));
    }],
    [RequestCode.BATCH_ACK_MESSAGE, async (req, rc) => {
      if (!req.body || req.body.length === 0) return createResponse(ResponseCode.NO_MESSAGE);
      let body;
      try {
        body = decodeBatchAckBody(req.body);
      } catch (err) {
        return createResponse(ResponseCode.SYSTEM_ERROR, `BATCH_ACK_MESSAGE: ${(err as Error).message}`);
      }
      return answer(await pop.batchAck(body, rc.channel.remoteAddress));
    }],
  ];
}
