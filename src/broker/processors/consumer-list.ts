// GET_CONSUMER_LIST_BY_GROUP (38). Java: broker/processor/ConsumerManageProcessor.getConsumerListByGroup.
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { HeaderReader, createResponse } from '../../remoting/command.js';
import type { ProcessorTable } from '../../remoting/dispatcher.js';
import type { BrokerContext } from '../context.js';

export function consumerListProcessors(ctx: BrokerContext): ProcessorTable {
  return [
    [RequestCode.GET_CONSUMER_LIST_BY_GROUP, (req) => {
      const group = new HeaderReader(req.extFields).str('consumerGroup');
      const ids = ctx.consumerManager.getAllClientIds(group);
      if (ids.length === 0) {
        // Clients skip this rebalance round on an error (Java answers SYSTEM_ERROR too).
        return createResponse(ResponseCode.SYSTEM_ERROR, `no consumer for this group, ${group}`);
      }
      return createResponse(ResponseCode.SUCCESS, undefined, {}, Buffer.from(JSON.stringify({ consumerIdList: ids })));
    }],
  ];
}
