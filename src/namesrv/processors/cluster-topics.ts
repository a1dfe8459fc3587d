// Read-only views: GET_BROKER_CLUSTER_INFO 106, GET_ALL_TOPIC_LIST_FROM_NAMESERVER 206, GET_TOPICS_BY_CLUSTER 224,
// GET_SYSTEM_TOPIC_LIST_FROM_NS 304, the unit topic lists 311-313 (MQAdminExt.getUnitTopics, getHasUnitSubTopicList,
// getHasUnitSubUnUnitTopicList), GET_BROKER_MEMBER_GROUP 901 (5.x brokers with compatibleWithOldNameSrv=false ask it
// for their group's members). Java: namesrv/processor/DefaultRequestProcessor.java.
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { HeaderReader, type RemotingCommand, createResponse } from '../../remoting/command.js';
import type { NamesrvContext, ProcessorTable } from '../context.js';
import { encodeBrokerMemberGroup, encodeClusterInfo, encodeTopicList } from '../route-types.js';

/** Java TopicSysFlag: FLAG_UNIT (bit 0), FLAG_UNIT_SUB (bit 1). */
const isUnit = (topicSysFlag: number): boolean => (topicSysFlag & 1) === 1;
const hasUnitSub = (topicSysFlag: number): boolean => (topicSysFlag & 2) === 2;

export function clusterTopicProcessors(ns: NamesrvContext): ProcessorTable {
  const getBrokerClusterInfo = (): RemotingCommand =>
    createResponse(ResponseCode.SUCCESS, undefined, {}, encodeClusterInfo(ns.routes.brokerAddrTable, ns.routes.clusterAddrTable));

  const getAllTopicList = (): RemotingCommand =>
    createResponse(ResponseCode.SUCCESS, undefined, {}, encodeTopicList(ns.routes.getAllTopicList()));

  const getTopicsByCluster = (req: RemotingCommand): RemotingCommand => {
    const cluster = new HeaderReader(req.extFields).str('cluster');
    return createResponse(ResponseCode.SUCCESS, undefined, {}, encodeTopicList(ns.routes.getTopicsByCluster(cluster)));
  };

  const getSystemTopicList = (): RemotingCommand => {
    const { topics, brokerAddr } = ns.routes.getSystemTopicList();
    return createResponse(ResponseCode.SUCCESS, undefined, {}, encodeTopicList(topics, brokerAddr));
  };

  const bySysFlag = (test: (flag: number) => boolean) => (): RemotingCommand =>
    createResponse(ResponseCode.SUCCESS, undefined, {}, encodeTopicList(ns.routes.getTopicsBySysFlag(test)));

  const getBrokerMemberGroup = (req: RemotingCommand): RemotingCommand => {
    const h = new HeaderReader(req.extFields);
    const clusterName = h.str('clusterName');
    const brokerName = h.str('brokerName');
    const body = encodeBrokerMemberGroup(clusterName, brokerName, ns.routes.brokerAddrTable.get(brokerName));
    return createResponse(ResponseCode.SUCCESS, undefined, {}, body);
  };

  return [
    [RequestCode.GET_BROKER_CLUSTER_INFO, getBrokerClusterInfo],
    [RequestCode.GET_BROKER_MEMBER_GROUP, getBrokerMemberGroup],
    [RequestCode.GET_UNIT_TOPIC_LIST, bySysFlag(isUnit)],
    [RequestCode.GET_HAS_UNIT_SUB_TOPIC_LIST, bySysFlag(hasUnitSub)],
    [RequestCode.GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST, bySysFlag((f) => !isUnit(f) && hasUnitSub(f))],
    [RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER, getAllTopicList],
    [RequestCode.GET_TOPICS_BY_CLUSTER, getTopicsByCluster],
    [RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_NS, getSystemTopicList],
  ];
}
