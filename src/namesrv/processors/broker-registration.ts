// Broker lifecycle: REGISTER_BROKER 103, UNREGISTER_BROKER 104, QUERY_DATA_VERSION 322, BROKER_HEARTBEAT 904.
// Java: namesrv/processor/DefaultRequestProcessor.java (registerBroker, unregisterBroker, queryBrokerTopicConfig,
// brokerHeartbeat).
import zlib from 'node:zlib';
import { limited } from '../../common/log-limiter.js';
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { HeaderReader, type RemotingCommand, createResponse } from '../../remoting/command.js';
import type { RequestContext } from '../../remoting/dispatcher.js';
import type { NamesrvContext, ProcessorTable } from '../context.js';
import { BodyDecodeError, decodeRegisterBrokerBody, parseDataVersionBody } from '../register-broker-body.js';
import { NAMESPACE_ORDER_TOPIC_CONFIG, encodeDataVersion, encodeKvTable } from '../route-types.js';

/** extField an RPC hook adds when the broker has a zone configured (Java: MixAll.ZONE_NAME). */
const ZONE_NAME_EXT_FIELD = '__ZONE_NAME';

/**
 * Java compares the header with `crc32(body) & 0x7FFFFFFF` (UtilAll.crc32) and skips the check for 0.
 * We also accept the unmasked value (signed or unsigned) a non-Java sender might compute.
 */
function crcMatches(body: Buffer | undefined, headerCrc: number): boolean {
  const full = body && body.length > 0 ? zlib.crc32(body) >>> 0 : 0;
  return headerCrc === (full & 0x7fffffff) || headerCrc === full || headerCrc === (full | 0);
}

function optBoolean(h: HeaderReader, name: string): boolean | undefined {
  const v = h.optStr(name);
  return v === undefined ? undefined : v.toLowerCase() === 'true';
}

export function brokerRegistrationProcessors(ns: NamesrvContext): ProcessorTable {
  const registerBroker = (req: RemotingCommand, ctx: RequestContext): RemotingCommand => {
    const h = new HeaderReader(req.extFields);
    const brokerName = h.str('brokerName');
    const brokerAddr = h.str('brokerAddr');
    const clusterName = h.str('clusterName');
    const haServerAddr = h.str('haServerAddr');
    const brokerId = h.long('brokerId');
    const heartbeatTimeoutMillis = h.optLong('heartbeatTimeoutMillis');
    const enableActingMaster = optBoolean(h, 'enableActingMaster');
    const compressed = h.bool('compressed');
    const bodyCrc32 = h.optInt('bodyCrc32', 0) ?? 0;

    if (bodyCrc32 !== 0 && !crcMatches(req.body, bodyCrc32)) {
      limited(ns.logger).warn('register-crc', { peer: ctx.channel.remoteAddress, brokerAddr }, 'register broker: crc32 not match');
      return createResponse(ResponseCode.SYSTEM_ERROR, 'crc32 not match');
    }

    let body;
    try {
      body = decodeRegisterBrokerBody(req.body, compressed);
    } catch (err) {
      if (!(err instanceof BodyDecodeError)) throw err;
      limited(ns.logger).warn('register-body', { peer: ctx.channel.remoteAddress, brokerAddr, err: err.message }, 'register broker: bad body');
      return createResponse(ResponseCode.SYSTEM_ERROR, `Failed to decode RegisterBrokerBody: ${err.message}`);
    }

    const result = ns.routes.registerBroker({
      clusterName,
      brokerAddr,
      brokerName,
      brokerId,
      haServerAddr,
      zoneName: req.extFields[ZONE_NAME_EXT_FIELD],
      heartbeatTimeoutMillis,
      enableActingMaster,
      dataVersion: body.dataVersion,
      topicConfigs: body.topicConfigs,
      filterServerList: body.filterServerList,
      channel: ctx.channel,
    });
    if (result === null) return createResponse(ResponseCode.SYSTEM_ERROR, 'register broker failed');

    const ext: Record<string, string> = {};
    if (result.haServerAddr !== undefined) ext.haServerAddr = result.haServerAddr;
    if (result.masterAddr !== undefined) ext.masterAddr = result.masterAddr;
    // returnOrderTopicConfigToBroker (Java default true): the ORDER_TOPIC_CONFIG namespace, if it exists.
    const orderConf = ns.kv.getNamespace(NAMESPACE_ORDER_TOPIC_CONFIG);
    return createResponse(ResponseCode.SUCCESS, undefined, ext, orderConf ? encodeKvTable(new Map(orderConf)) : undefined);
  };

  const unregisterBroker = (req: RemotingCommand): RemotingCommand => {
    const h = new HeaderReader(req.extFields);
    const brokerName = h.str('brokerName');
    const brokerAddr = h.str('brokerAddr');
    const clusterName = h.str('clusterName');
    const brokerId = h.long('brokerId');
    ns.routes.unregisterBroker({ clusterName, brokerAddr, brokerName, brokerId });
    return createResponse(ResponseCode.SUCCESS);
  };

  const queryDataVersion = (req: RemotingCommand): RemotingCommand => {
    const h = new HeaderReader(req.extFields);
    h.str('brokerName');
    const brokerAddr = h.str('brokerAddr');
    const clusterName = h.str('clusterName');
    h.long('brokerId');
    let dv;
    try {
      dv = parseDataVersionBody(req.body);
    } catch (err) {
      if (!(err instanceof BodyDecodeError)) throw err;
      return createResponse(ResponseCode.SYSTEM_ERROR, `Failed to decode DataVersion: ${err.message}`);
    }
    const changed = ns.routes.isBrokerTopicConfigChanged(clusterName, brokerAddr, dv);
    ns.routes.updateBrokerInfoUpdateTimestamp(clusterName, brokerAddr);
    const current = ns.routes.queryBrokerTopicConfig(clusterName, brokerAddr);
    return createResponse(ResponseCode.SUCCESS, undefined, { changed: String(changed) }, current ? encodeDataVersion(current) : undefined);
  };

  const brokerHeartbeat = (req: RemotingCommand): RemotingCommand => {
    const h = new HeaderReader(req.extFields);
    const clusterName = h.str('clusterName');
    const brokerAddr = h.str('brokerAddr');
    h.str('brokerName');
    ns.routes.updateBrokerInfoUpdateTimestamp(clusterName, brokerAddr);
    return createResponse(ResponseCode.SUCCESS);
  };

  return [
    [RequestCode.REGISTER_BROKER, registerBroker],
    [RequestCode.UNREGISTER_BROKER, unregisterBroker],
    [RequestCode.QUERY_DATA_VERSION, queryDataVersion],
    [RequestCode.BROKER_HEARTBEAT, brokerHeartbeat],
  ];
}
