// GET_ROUTEINFO_BY_TOPIC 105. Java: namesrv/processor/ClientRequestProcessor.java.
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { HeaderReader, type RemotingCommand, createResponse } from '../../remoting/command.js';
import type { NamesrvContext, ProcessorTable } from '../context.js';
import { NAMESPACE_ORDER_TOPIC_CONFIG, encodeTopicRouteData } from '../route-types.js';

/** Java: FAQUrl.APPLY_TOPIC_URL via FAQUrl.suggestTodo (5.x text). */
const APPLY_TOPIC_HINT = '\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details.';

export function routeProcessors(ns: NamesrvContext): ProcessorTable {
  const getRouteInfoByTopic = (req: RemotingCommand): RemotingCommand => {
    const topic = new HeaderReader(req.extFields).str('topic');
    const route = ns.routes.pickupTopicRouteData(topic);
    if (!route) {
      return createResponse(ResponseCode.TOPIC_NOT_EXIST, `No topic route info in name server for the topic: ${topic}${APPLY_TOPIC_HINT}`);
    }
    if (ns.config.orderMessageEnable) route.orderTopicConf = ns.kv.get(NAMESPACE_ORDER_TOPIC_CONFIG, topic);
    // Java sends the unquoted fastjson form to clients < 4.9.4 unless acceptStandardJsonOnly; every client we
    // know (Go's text split included) reads the standard form, so everyone gets it.
    return createResponse(ResponseCode.SUCCESS, undefined, {}, encodeTopicRouteData(route));
  };
  return [[RequestCode.GET_ROUTEINFO_BY_TOPIC, getRouteInfoByTopic]];
}
