import type { Logger } from 'pino';
import type { ClientChannel } from '../remoting/dispatcher.js';
import {
  type BrokerData,
  type DataVersion,
  MASTER_ID,
  PermName,
  type QueueData,
  type TopicConfigInfo,
  type TopicRouteData,
  dataVersionEquals,
} from './route-types.js';

/** Liveness of one registered broker address (Java: BrokerLiveInfo). */
export interface BrokerLiveInfo {
  lastUpdateTimestamp: number;
  heartbeatTimeoutMillis: number;
  dataVersion: DataVersion;
  /** The channel the broker registered on; its close unregisters the broker. Null when not registered over TCP. */
  channel: ClientChannel | null;
  haServerAddr: string;
}

export interface RegisterBrokerRequest {
  clusterName: string;
  brokerAddr: string;
  brokerName: string;
  brokerId: number;
  haServerAddr: string;
  zoneName?: string;
  /** Header heartbeatTimeoutMillis; absent → the configured brokerChannelExpiredTime. */
  heartbeatTimeoutMillis?: number;
  /** Header enableActingMaster; absent marks an old (4.x) broker. */
  enableActingMaster?: boolean;
  dataVersion: DataVersion;
  topicConfigs: TopicConfigInfo[];
  filterServerList: string[] | null;
  channel: ClientChannel | null;
}

export interface RegisterBrokerResult {
  haServerAddr?: string;
  masterAddr?: string;
}

export interface UnregisterBrokerRequest {
  clusterName: string;
  brokerAddr: string;
  brokerName: string;
  brokerId: number;
}

export interface RouteInfoOptions {
  /** Default expiry for brokers that do not send heartbeatTimeoutMillis (Java: 120 s). */
  brokerChannelExpiredTimeMs: number;
  now?: () => number;
}

/** Brokers live in the table under (cluster, addr), like Java 5.x's BrokerAddrInfo. */
function liveKey(clusterName: string, brokerAddr: string): string {
  return `${clusterName}\u0000${brokerAddr}`;
}

function minKey(m: Map<number, string>): number {
  let min = Infinity;
  for (const k of m.keys()) if (k < min) min = k;
  return min;
}

/**
 * The nameserver's route tables (Java: namesrv/routeinfo/RouteInfoManager.java, 5.x semantics).
 * Single-threaded JS: no lock needed, every method runs to completion.
 */
export class RouteInfoManager {
  /** topic → brokerName → QueueData */
  readonly topicQueueTable = new Map<string, Map<string, QueueData>>();
  /** brokerName → BrokerData */
  readonly brokerAddrTable = new Map<string, BrokerData>();
  /** cluster → brokerNames */
  readonly clusterAddrTable = new Map<string, Set<string>>();
  /** liveKey(cluster, addr) → live info */
  readonly brokerLiveTable = new Map<string, BrokerLiveInfo & { clusterName: string; brokerAddr: string }>();
  /** liveKey(cluster, addr) → filter server addresses */
  readonly filterServerTable = new Map<string, string[]>();

  /**
   * Bumped by every change that can alter what pickupTopicRouteData returns (queue data, broker addresses and
   * flags, filter servers): a route encoded at one version is valid until the version moves.
   */
  private routeVersion = 0;
  private readonly now: () => number;

  constructor(
    private readonly options: RouteInfoOptions,
    private readonly logger: Logger,
  ) {
    this.now = options.now ?? Date.now;
  }

  /** See routeVersion. */
  get version(): number {
    return this.routeVersion;
  }

  /** REGISTER_BROKER. Returns null when Java answers "register broker failed". */
  registerBroker(req: RegisterBrokerRequest): RegisterBrokerResult | null {
    const { clusterName, brokerAddr, brokerName, brokerId } = req;
    const result: RegisterBrokerResult = {};

    // Java 5.x: a single-topic registration (sent after one topic changes) needs a full registration first.
    // Checked before touching any table (Java leaves an empty BrokerData behind here).
    if (req.topicConfigs.length === 1 && !this.brokerAddrTable.get(brokerName)?.brokerAddrs.has(brokerId)) {
      this.logger.warn({ brokerName, brokerId, brokerAddr }, 'single-topic registration before the first full one, rejected');
      return null;
    }

    let brokerNames = this.clusterAddrTable.get(clusterName);
    if (!brokerNames) {
      brokerNames = new Set();
      this.clusterAddrTable.set(clusterName, brokerNames);
    }
    brokerNames.add(brokerName);

    let registerFirst = false;
    let brokerData = this.brokerAddrTable.get(brokerName);
    if (!brokerData) {
      registerFirst = true;
      brokerData = { cluster: clusterName, brokerName, brokerAddrs: new Map(), enableActingMaster: false };
      this.brokerAddrTable.set(brokerName, brokerData);
    }
    const isOldVersionBroker = req.enableActingMaster === undefined;
    const enableActingMaster = !isOldVersionBroker && req.enableActingMaster === true;
    if (registerFirst || brokerData.enableActingMaster !== enableActingMaster || brokerData.zoneName !== req.zoneName) this.routeVersion++;
    brokerData.enableActingMaster = enableActingMaster;
    brokerData.zoneName = req.zoneName;

    const addrs = brokerData.brokerAddrs;
    // Role switch (slave → master): one address maps to one id only.
    for (const [id, addr] of addrs) {
      if (addr === brokerAddr && id !== brokerId) {
        addrs.delete(id);
        this.routeVersion++;
      }
    }

    // Java 5.x: a different address already holding this id with a higher stateVersion wins.
    const oldAddrForId = addrs.get(brokerId);
    if (oldAddrForId !== undefined && oldAddrForId !== brokerAddr) {
      const oldLive = this.brokerLiveTable.get(liveKey(clusterName, oldAddrForId));
      if (oldLive && oldLive.dataVersion.stateVersion > req.dataVersion.stateVersion) {
        this.logger.warn({ clusterName, brokerName, brokerId, oldAddrForId, brokerAddr }, 'registering broker conflicts with a newer one, ignored');
        this.brokerLiveTable.delete(liveKey(clusterName, brokerAddr));
        return result;
      }
    }

    const oldAddr = addrs.get(brokerId);
    if (oldAddr !== brokerAddr) this.routeVersion++;
    addrs.set(brokerId, brokerAddr);
    registerFirst = registerFirst || oldAddr === undefined || oldAddr === '';

    const isMaster = brokerId === MASTER_ID;
    const isPrimeSlave = !isOldVersionBroker && !isMaster && brokerId === minKey(addrs);
    if (isMaster || isPrimeSlave) {
      const changed = this.isBrokerTopicConfigChanged(clusterName, brokerAddr, req.dataVersion);
      for (const tc of req.topicConfigs) {
        if (registerFirst || changed || this.isTopicMissingBroker(brokerName, tc.topicName)) {
          let perm = tc.perm;
          // Acting-master mode: the surviving lowest slave serves read-only.
          if (isPrimeSlave && brokerData.enableActingMaster) perm &= ~PermName.PERM_WRITE;
          this.createAndUpdateQueueData(brokerName, { ...tc, perm });
        }
      }
    }

    const key = liveKey(clusterName, brokerAddr);
    const prev = this.brokerLiveTable.get(key);
    this.brokerLiveTable.set(key, {
      clusterName,
      brokerAddr,
      lastUpdateTimestamp: this.now(),
      heartbeatTimeoutMillis: req.heartbeatTimeoutMillis ?? this.options.brokerChannelExpiredTimeMs,
      dataVersion: req.dataVersion,
      channel: req.channel,
      haServerAddr: req.haServerAddr,
    });
    if (!prev) this.logger.info({ clusterName, brokerName, brokerId, brokerAddr, haServerAddr: req.haServerAddr }, 'new broker registered');

    if (req.filterServerList !== null) {
      if (req.filterServerList.length === 0) {
        if (this.filterServerTable.delete(key)) this.routeVersion++;
      } else {
        this.filterServerTable.set(key, req.filterServerList);
        this.routeVersion++;
      }
    }

    if (brokerId !== MASTER_ID) {
      const masterAddr = addrs.get(MASTER_ID);
      if (masterAddr !== undefined) {
        const masterLive = this.brokerLiveTable.get(liveKey(clusterName, masterAddr));
        if (masterLive) {
          result.haServerAddr = masterLive.haServerAddr;
          result.masterAddr = masterAddr;
        }
      }
    }
    return result;
  }

  private isTopicMissingBroker(brokerName: string, topic: string): boolean {
    const qdMap = this.topicQueueTable.get(topic);
    return !qdMap || qdMap.size === 0 || !qdMap.has(brokerName);
  }

  private createAndUpdateQueueData(brokerName: string, tc: TopicConfigInfo): void {
    this.routeVersion++;
    const qd: QueueData = {
      brokerName,
      readQueueNums: tc.readQueueNums,
      writeQueueNums: tc.writeQueueNums,
      perm: tc.perm,
      topicSysFlag: tc.topicSysFlag,
    };
    let qdMap = this.topicQueueTable.get(tc.topicName);
    if (!qdMap) {
      qdMap = new Map();
      this.topicQueueTable.set(tc.topicName, qdMap);
      this.logger.info({ topic: tc.topicName, queueData: qd }, 'new topic registered');
    }
    qdMap.set(brokerName, qd);
  }

  isBrokerTopicConfigChanged(clusterName: string, brokerAddr: string, dv: DataVersion): boolean {
    const prev = this.queryBrokerTopicConfig(clusterName, brokerAddr);
    return prev === undefined || !dataVersionEquals(prev, dv);
  }

  queryBrokerTopicConfig(clusterName: string, brokerAddr: string): DataVersion | undefined {
    return this.brokerLiveTable.get(liveKey(clusterName, brokerAddr))?.dataVersion;
  }

  updateBrokerInfoUpdateTimestamp(clusterName: string, brokerAddr: string): void {
    const live = this.brokerLiveTable.get(liveKey(clusterName, brokerAddr));
    if (live) live.lastUpdateTimestamp = this.now();
  }

  /** UNREGISTER_BROKER, channel close and expiry all end here (Java: unRegisterBroker). */
  unregisterBroker(req: UnregisterBrokerRequest): void {
    const { clusterName, brokerAddr, brokerName } = req;
    this.routeVersion++;
    const key = liveKey(clusterName, brokerAddr);
    const removedLive = this.brokerLiveTable.delete(key);
    this.filterServerTable.delete(key);
    this.logger.info({ clusterName, brokerName, brokerAddr, removedLive }, 'unregister broker');

    let removeBrokerName = false;
    const brokerData = this.brokerAddrTable.get(brokerName);
    if (brokerData) {
      for (const [id, addr] of brokerData.brokerAddrs) if (addr === brokerAddr) brokerData.brokerAddrs.delete(id);
      if (brokerData.brokerAddrs.size === 0) {
        this.brokerAddrTable.delete(brokerName);
        removeBrokerName = true;
      }
    }
    if (removeBrokerName) {
      const names = this.clusterAddrTable.get(clusterName);
      if (names) {
        names.delete(brokerName);
        if (names.size === 0) this.clusterAddrTable.delete(clusterName);
      }
    }

    for (const [topic, qdMap] of this.topicQueueTable) {
      if (removeBrokerName) qdMap.delete(brokerName);
      if (qdMap.size === 0) {
        this.topicQueueTable.delete(topic);
        continue;
      }
      // Acting-master mode: a group whose master left keeps only read permission.
      const qd = qdMap.get(brokerName);
      if (!removeBrokerName && qd && this.brokerAddrTable.get(brokerName)?.enableActingMaster && this.isNoMasterExists(brokerName)) {
        qd.perm &= ~PermName.PERM_WRITE;
      }
    }
  }

  private isNoMasterExists(brokerName: string): boolean {
    const bd = this.brokerAddrTable.get(brokerName);
    if (!bd || bd.brokerAddrs.size === 0) return true;
    return minKey(bd.brokerAddrs) > 0;
  }

  /** Looks up which (cluster, addr) a live key denotes and unregisters it with its brokerName/id. */
  private unregisterLive(clusterName: string, brokerAddr: string): boolean {
    for (const bd of this.brokerAddrTable.values()) {
      if (bd.cluster !== clusterName) continue;
      for (const [id, addr] of bd.brokerAddrs) {
        if (addr === brokerAddr) {
          this.unregisterBroker({ clusterName, brokerAddr, brokerName: bd.brokerName, brokerId: id });
          return true;
        }
      }
    }
    // Not in any BrokerData (e.g. rejected registration): drop the live entry alone.
    const key = liveKey(clusterName, brokerAddr);
    if (this.filterServerTable.delete(key)) this.routeVersion++;
    return this.brokerLiveTable.delete(key);
  }

  /** The channel a broker registered on closed (Java: BrokerHousekeepingService → onChannelDestroy). */
  onConnectionClosed(conn: ClientChannel): number {
    let removed = 0;
    for (const live of [...this.brokerLiveTable.values()]) {
      if (live.channel === conn) {
        this.logger.info({ brokerAddr: live.brokerAddr, peer: conn.remoteAddress }, 'broker channel closed, removing broker');
        if (this.unregisterLive(live.clusterName, live.brokerAddr)) removed++;
      }
    }
    return removed;
  }

  /** Removes brokers not heard from within their timeout; closes their connections like Java. Returns their addresses. */
  scanNotActiveBrokers(): string[] {
    const now = this.now();
    const expired: string[] = [];
    for (const [key, live] of [...this.brokerLiveTable]) {
      // closing one expired link may already have removed other brokers registered on it
      if (this.brokerLiveTable.get(key) !== live) continue;
      if (live.lastUpdateTimestamp + live.heartbeatTimeoutMillis < now) {
        this.logger.warn({ brokerAddr: live.brokerAddr, timeoutMs: live.heartbeatTimeoutMillis }, 'broker expired, removing');
        this.unregisterLive(live.clusterName, live.brokerAddr);
        expired.push(live.brokerAddr);
        live.channel?.close();
      }
    }
    return expired;
  }

  /** GET_ROUTEINFO_BY_TOPIC: null when the topic or all its brokers are unknown. */
  pickupTopicRouteData(topic: string): TopicRouteData | null {
    const qdMap = this.topicQueueTable.get(topic);
    if (!qdMap) return null;
    const names = [...qdMap.keys()].sort();
    const queueDatas = names.map((n) => ({ ...qdMap.get(n)! }));
    const brokerDatas: BrokerData[] = [];
    const filterServerTable = new Map<string, string[]>();
    for (const name of names) {
      const bd = this.brokerAddrTable.get(name);
      if (!bd) continue;
      brokerDatas.push({ ...bd, brokerAddrs: new Map(bd.brokerAddrs) });
      if (this.filterServerTable.size === 0) continue;
      for (const addr of bd.brokerAddrs.values()) {
        const list = this.filterServerTable.get(liveKey(bd.cluster, addr));
        if (list && list.length > 0) filterServerTable.set(addr, list);
      }
    }
    if (brokerDatas.length === 0) return null;
    return { queueDatas, brokerDatas, filterServerTable };
  }

  getAllTopicList(): string[] {
    return [...this.topicQueueTable.keys()];
  }

  /**
   * GET_UNIT_TOPIC_LIST (311), GET_HAS_UNIT_SUB_TOPIC_LIST (312), GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST (313): topics
   * whose topicSysFlag (of the first broker's queue data, as Java looks) passes `test`.
   */
  getTopicsBySysFlag(test: (topicSysFlag: number) => boolean): string[] {
    const out: string[] = [];
    for (const [topic, qdMap] of this.topicQueueTable) {
      const first = qdMap.values().next();
      if (!first.done && test(first.value.topicSysFlag)) out.push(topic);
    }
    return out;
  }

  /** Java: unknown cluster → empty list (its NPE is swallowed). */
  getTopicsByCluster(cluster: string): string[] {
    const names = this.clusterAddrTable.get(cluster);
    if (!names) return [];
    const out = new Set<string>();
    for (const name of names) {
      for (const [topic, qdMap] of this.topicQueueTable) if (qdMap.has(name)) out.add(topic);
    }
    return [...out];
  }

  /** GET_SYSTEM_TOPIC_LIST_FROM_NS: cluster names and broker names (Java quirk), plus one broker address. */
  getSystemTopicList(): { topics: string[]; brokerAddr?: string } {
    const topics = new Set<string>();
    for (const [cluster, names] of this.clusterAddrTable) {
      topics.add(cluster);
      for (const n of names) topics.add(n);
    }
    let brokerAddr: string | undefined;
    for (const bd of this.brokerAddrTable.values()) {
      const first = bd.brokerAddrs.values().next();
      if (!first.done) {
        brokerAddr = first.value;
        break;
      }
    }
    return { topics: [...topics], brokerAddr };
  }

  /** DELETE_TOPIC_IN_NAMESRV: whole topic, or only the brokers of one cluster. */
  deleteTopic(topic: string, clusterName?: string): void {
    this.routeVersion++;
    if (clusterName === undefined || clusterName === '') {
      this.topicQueueTable.delete(topic);
      return;
    }
    const names = this.clusterAddrTable.get(clusterName);
    const qdMap = this.topicQueueTable.get(topic);
    if (!names || names.size === 0 || !qdMap) return;
    for (const n of names) qdMap.delete(n);
    if (qdMap.size === 0) this.topicQueueTable.delete(topic);
  }

  /** REGISTER_TOPIC_IN_NAMESRV (5.x): ignored entirely if any queue names an unknown broker. */
  registerTopic(topic: string, queueDatas: QueueData[]): boolean {
    if (queueDatas.length === 0) return false;
    for (const qd of queueDatas) {
      if (!this.brokerAddrTable.has(qd.brokerName)) {
        this.logger.warn({ topic, brokerName: qd.brokerName }, 'register topic names an unknown broker, ignored');
        return false;
      }
    }
    this.routeVersion++;
    let qdMap = this.topicQueueTable.get(topic);
    if (!qdMap) {
      qdMap = new Map();
      this.topicQueueTable.set(topic, qdMap);
    }
    for (const qd of queueDatas) qdMap.set(qd.brokerName, { ...qd });
    return true;
  }

  /** WIPE_WRITE_PERM_OF_BROKER: returns the number of topics touched. */
  wipeWritePermOfBroker(brokerName: string): number {
    return this.operateWritePerm(brokerName, (perm) => perm & ~PermName.PERM_WRITE);
  }

  /** ADD_WRITE_PERM_OF_BROKER: Java sets perm to exactly READ|WRITE. */
  addWritePermOfBroker(brokerName: string): number {
    return this.operateWritePerm(brokerName, () => PermName.PERM_READ | PermName.PERM_WRITE);
  }

  private operateWritePerm(brokerName: string, f: (perm: number) => number): number {
    this.routeVersion++;
    let count = 0;
    for (const qdMap of this.topicQueueTable.values()) {
      const qd = qdMap.get(brokerName);
      if (!qd) continue;
      qd.perm = f(qd.perm);
      count++;
    }
    return count;
  }
}
