// Route edits from mqadmin: DELETE_TOPIC_IN_NAMESRV 216, REGISTER_TOPIC_IN_NAMESRV 217 (5.x),
// WIPE_WRITE_PERM_OF_BROKER 205, ADD_WRITE_PERM_OF_BROKER 327. Java: namesrv/processor/DefaultRequestProcessor.java.
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { HeaderReader, type RemotingCommand, createResponse } from '../../remoting/command.js';
import type { RequestContext } from '../../remoting/dispatcher.js';
import type { NamesrvContext, ProcessorTable } from '../context.js';
import { BodyDecodeError, decodeQueueDatas } from '../register-broker-body.js';

export function topicAdminProcessors(ns: NamesrvContext): ProcessorTable {
  const deleteTopic = (req: RemotingCommand): RemotingCommand => {
    const h = new HeaderReader(req.extFields);
    const topic = h.str('topic');
    ns.routes.deleteTopic(topic, h.optStr('clusterName'));
    return createResponse(ResponseCode.SUCCESS);
  };

  const registerTopic = (req: RemotingCommand): RemotingCommand => {
    const topic = new HeaderReader(req.extFields).str('topic');
    try {
      ns.routes.registerTopic(topic, decodeQueueDatas(req.body));
    } catch (err) {
      if (!(err instanceof BodyDecodeError)) throw err;
      return createResponse(ResponseCode.SYSTEM_ERROR, `Failed to decode TopicRouteData: ${err.message}`);
    }
    return createResponse(ResponseCode.SUCCESS);
  };

  const wipeWritePerm = (req: RemotingCommand, ctx: RequestContext): RemotingCommand => {
    const brokerName = new HeaderReader(req.extFields).str('brokerName');
    const count = ns.routes.wipeWritePermOfBroker(brokerName);
    ns.logger.info({ brokerName, client: ctx.channel.remoteAddress, count }, 'wipe write perm of broker');
    return createResponse(ResponseCode.SUCCESS, undefined, { wipeTopicCount: String(count) });
  };

  const addWritePerm = (req: RemotingCommand, ctx: RequestContext): RemotingCommand => {
    const brokerName = new HeaderReader(req.extFields).str('brokerName');
    const count = ns.routes.addWritePermOfBroker(brokerName);
    ns.logger.info({ brokerName, client: ctx.channel.remoteAddress, count }, 'add write perm of broker');
    return createResponse(ResponseCode.SUCCESS, undefined, { addTopicCount: String(count) });
  };

  return [
    [RequestCode.DELETE_TOPIC_IN_NAMESRV, deleteTopic],
    [RequestCode.REGISTER_TOPIC_IN_NAMESRV, registerTopic],
    [RequestCode.WIPE_WRITE_PERM_OF_BROKER, wipeWritePerm],
    [RequestCode.ADD_WRITE_PERM_OF_BROKER, addWritePerm],
  ];
}
