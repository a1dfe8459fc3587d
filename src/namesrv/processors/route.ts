// GET_ROUTEINFO_BY_TOPIC 105. Java: namesrv/processor/ClientRequestProcessor.java.
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { HeaderReader, type RemotingCommand, createResponse } from '../../remoting/command.js';
import type { NamesrvContext, ProcessorTable } from '../context.js';
import { NAMESPACE_ORDER_TOPIC_CONFIG, encodeTopicRouteData } from '../route-types.js';

/** Java: FAQUrl.APPLY_TOPIC_URL via FAQUrl.suggestTodo (5.x text). */
const APPLY_TOPIC_HINT = '\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details.';

/** Encoded routes kept at most; past it the cache starts over (a miss costs one encode). */
const ROUTE_CACHE_MAX_TOPICS = 65_536;

/**
 * Encoded route bodies by topic, valid while the route tables stay at the version they were encoded at: clients
 * look the same routes up every 30 s and brokers change them rarely, so a lookup is a map hit instead of a table
 * walk and a JSON encode (Java encodes every time).
 */
class RouteBodyCache {
  private version = -1;
  private readonly bodies = new Map<string, Buffer>();

  get(topic: string, version: number): Buffer | undefined {
    if (version !== this.version) {
      this.bodies.clear();
      this.version = version;
      return undefined;
    }
    return this.bodies.get(topic);
  }

  set(topic: string, body: Buffer): void {
    if (this.bodies.size >= ROUTE_CACHE_MAX_TOPICS) this.bodies.clear();
    this.bodies.set(topic, body);
  }
}

export function routeProcessors(ns: NamesrvContext): ProcessorTable {
  const cache = new RouteBodyCache();
  const getRouteInfoByTopic = (req: RemotingCommand): RemotingCommand => {
    const topic = new HeaderReader(req.extFields).str('topic');
    // An order-topic config comes from the KV table, which changes apart from the routes: not cached.
    const cacheable = !ns.config.orderMessageEnable;
    const cached = cacheable ? cache.get(topic, ns.routes.version) : undefined;
    if (cached) return createResponse(ResponseCode.SUCCESS, undefined, {}, cached);
    const route = ns.routes.pickupTopicRouteData(topic);
    if (!route) {
      return createResponse(ResponseCode.TOPIC_NOT_EXIST, `No topic route info in name server for the topic: ${topic}${APPLY_TOPIC_HINT}`);
    }
    if (ns.config.orderMessageEnable) route.orderTopicConf = ns.kv.get(NAMESPACE_ORDER_TOPIC_CONFIG, topic);
    // Java sends the unquoted fastjson form to clients < 4.9.4 unless acceptStandardJsonOnly; every client we
    // know (Go's text split included) reads the standard form, so everyone gets it.
    const body = encodeTopicRouteData(route);
    if (cacheable) cache.set(topic, body);
    return createResponse(ResponseCode.SUCCESS, undefined, {}, body);
  };
  return [[RequestCode.GET_ROUTEINFO_BY_TOPIC, getRouteInfoByTopic]];
}
