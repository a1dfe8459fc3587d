// GET_CONSUMER_LIST_BY_GROUP (38) and the broker→client NOTIFY_CONSUMER_IDS_CHANGED (40).
// Java: broker/processor/ConsumerManageProcessor.getConsumerListByGroup, broker/client/net/Broker2Client.
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { HeaderReader, createRequest, createResponse } from '../../remoting/command.js';
import type { Connection } from '../../remoting/connection.js';
import type { RemotingServer } from '../../remoting/server.js';
import type { BrokerContext } from '../context.js';

/** Tells one client that its group's membership changed (oneway; the client rebalances at once). */
export function notifyConsumerIdsChanged(connection: Connection, consumerGroup: string): void {
  connection.sendOneway(createRequest(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, { consumerGroup }));
}

export function registerConsumerListProcessors(server: RemotingServer, ctx: BrokerContext): void {
  server.register(RequestCode.GET_CONSUMER_LIST_BY_GROUP, (req) => {
    const group = new HeaderReader(req.extFields).str('consumerGroup');
    const ids = ctx.consumerManager.getAllClientIds(group);
    if (ids.length === 0) {
      // Clients skip this rebalance round on an error (Java answers SYSTEM_ERROR too).
      return createResponse(ResponseCode.SYSTEM_ERROR, `no consumer for this group, ${group}`);
    }
    return createResponse(ResponseCode.SUCCESS, undefined, {}, Buffer.from(JSON.stringify({ consumerIdList: ids })));
  });
}
