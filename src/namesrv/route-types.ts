import { stringifyFastjson } from '../common/fastjson.js';

/** Permission bits of a topic / queue (Java: common/constant/PermName.java). */
export const PermName = {
  PERM_PRIORITY: 8,
  PERM_READ: 4,
  PERM_WRITE: 2,
  PERM_INHERIT: 1,
} as const;

/** Java: MixAll.MASTER_ID. */
export const MASTER_ID = 0;

/** KV namespace holding per-topic order configs (Java: NamesrvUtil.NAMESPACE_ORDER_TOPIC_CONFIG). */
export const NAMESPACE_ORDER_TOPIC_CONFIG = 'ORDER_TOPIC_CONFIG';

/** Java: route/QueueData.java. */
export interface QueueData {
  brokerName: string;
  readQueueNums: number;
  writeQueueNums: number;
  perm: number;
  topicSysFlag: number;
}

/** Java: route/BrokerData.java. brokerAddrs: brokerId → "ip:port" (id 0 = master). */
export interface BrokerData {
  cluster: string;
  brokerName: string;
  brokerAddrs: Map<number, string>;
  zoneName?: string;
  enableActingMaster: boolean;
}

/** Java: DataVersion.java (4.9.x has no stateVersion; it reads as 0). Values are ms / counters, safe as numbers. */
export interface DataVersion {
  stateVersion: number;
  timestamp: number;
  counter: number;
}

/** The part of a broker's TopicConfig the nameserver uses (Java: common/TopicConfig.java). */
export interface TopicConfigInfo {
  topicName: string;
  readQueueNums: number;
  writeQueueNums: number;
  perm: number;
  topicSysFlag: number;
}

export interface TopicRouteData {
  orderTopicConf?: string;
  queueDatas: QueueData[];
  brokerDatas: BrokerData[];
  /** brokerAddr → filter server addresses; Java fills it only when some broker registered filter servers. */
  filterServerTable: Map<string, string[]>;
}

export function dataVersionEquals(a: DataVersion, b: DataVersion): boolean {
  return a.stateVersion === b.stateVersion && a.timestamp === b.timestamp && a.counter === b.counter;
}

// ---- JSON bodies. Field names and order as fastjson writes them (alphabetical, nulls omitted). ----

function brokerDataJson(b: BrokerData): Record<string, unknown> {
  // Quoted numeric keys, ascending ids: what the Java namesrv sends to >= 4.9.4 clients (standard JSON).
  const addrs = new Map<string, string>();
  for (const id of [...b.brokerAddrs.keys()].sort((x, y) => x - y)) addrs.set(String(id), b.brokerAddrs.get(id)!);
  return {
    brokerAddrs: addrs,
    brokerName: b.brokerName,
    cluster: b.cluster,
    enableActingMaster: b.enableActingMaster,
    zoneName: b.zoneName,
  };
}

function queueDataJson(q: QueueData): Record<string, unknown> {
  return {
    brokerName: q.brokerName,
    perm: q.perm,
    readQueueNums: q.readQueueNums,
    topicSysFlag: q.topicSysFlag,
    writeQueueNums: q.writeQueueNums,
  };
}

/**
 * TopicRouteData (GET_ROUTEINFO_BY_TOPIC). Compact standard JSON; both arrays always present;
 * BrowserCompatible like Java's answer to >= 4.9.4 clients (Go splits brokerAddrs on raw text: no spaces).
 */
export function encodeTopicRouteData(r: TopicRouteData): Buffer {
  const filterServerTable = new Map<string, string[]>();
  for (const [addr, list] of r.filterServerTable) filterServerTable.set(addr, list);
  const body = {
    brokerDatas: r.brokerDatas.map(brokerDataJson),
    filterServerTable,
    orderTopicConf: r.orderTopicConf,
    queueDatas: r.queueDatas.map(queueDataJson),
  };
  return Buffer.from(stringifyFastjson(body, { browserCompatible: true }), 'utf8');
}

/** ClusterInfo (GET_BROKER_CLUSTER_INFO). Java writes bare numeric keys here; quoted is what every reader accepts. */
export function encodeClusterInfo(brokerAddrTable: Map<string, BrokerData>, clusterAddrTable: Map<string, Set<string>>): Buffer {
  const brokers = new Map<string, unknown>();
  for (const [name, bd] of brokerAddrTable) brokers.set(name, brokerDataJson(bd));
  const clusters = new Map<string, string[]>();
  for (const [cluster, names] of clusterAddrTable) clusters.set(cluster, [...names]);
  return Buffer.from(stringifyFastjson({ brokerAddrTable: brokers, clusterAddrTable: clusters }), 'utf8');
}

/**
 * GetBrokerMemberGroupResponseBody: `{"brokerMemberGroup":{"brokerAddrs":{…},"brokerName":…,"cluster":…}}`, the
 * group's members by id (none when the name is unknown), named by the cluster the request gave (as Java does).
 */
export function encodeBrokerMemberGroup(cluster: string, brokerName: string, bd: BrokerData | undefined): Buffer {
  const addrs = new Map<string, string>();
  if (bd) for (const id of [...bd.brokerAddrs.keys()].sort((x, y) => x - y)) addrs.set(String(id), bd.brokerAddrs.get(id)!);
  return Buffer.from(stringifyFastjson({ brokerMemberGroup: { brokerAddrs: addrs, brokerName, cluster } }), 'utf8');
}

/** TopicList: `{"brokerAddr":…,"topicList":[…]}` (brokerAddr omitted when null). */
export function encodeTopicList(topics: Iterable<string>, brokerAddr?: string): Buffer {
  return Buffer.from(stringifyFastjson({ brokerAddr, topicList: [...topics] }), 'utf8');
}

export function encodeDataVersion(dv: DataVersion): Buffer {
  return Buffer.from(stringifyFastjson({ counter: dv.counter, stateVersion: dv.stateVersion, timestamp: dv.timestamp }), 'utf8');
}

/** KVTable: `{"table":{k:v}}`. */
export function encodeKvTable(table: Map<string, string>): Buffer {
  return Buffer.from(stringifyFastjson({ table }), 'utf8');
}
