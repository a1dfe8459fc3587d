// Broker-side queue assignment (Java QueryAssignmentProcessor, AllocateMessageQueueAveragely / …ByCircle): a 5.x
// client with setClientRebalance(false) asks the broker which queues it gets, and in which mode. PULL assignments
// are the named strategy's share; POP assignments are queue id −1 per broker (every client pops every queue) unless
// popShareQueueNum says otherwise. The topic's queues come from the nameserver's route (cached 30 s, as Java's
// TopicRouteInfoManager), so an unknown topic answers "no assignment" (null), never an error.
import { ResponseCode } from '../../common/response-code.js';
import type { MessageQueue } from '../client/types.js';
import type { BrokerContext } from '../context.js';
import { type Refusal, refusal } from '../outcome.js';
import { RETRY_GROUP_TOPIC_PREFIX, isReadable } from '../topic/topic-config.js';
import { type MessageRequestMode, MessageRequestModeManager, type RequestModeEntry } from './request-mode-manager.js';

/** Java BrokerConfig.loadBalancePollNameServerInterval: how long a fetched route is used. */
const ROUTE_CACHE_MS = 30_000;

export interface QueryAssignmentRequest {
  topic: string;
  consumerGroup: string;
  clientId: string;
  /** AllocateMessageQueueStrategy.getName(): "AVG" or "AVG_BY_CIRCLE". */
  strategyName: string;
  messageModel: string;
}

export interface MessageQueueAssignment {
  messageQueue: MessageQueue;
  mode: MessageRequestMode;
}

/** One queue data of a route (what the nameserver answers for GET_ROUTEINFO_BY_TOPIC). */
export interface RouteQueueData {
  brokerName: string;
  readQueueNums: number;
  perm: number;
}

/** Fetches a topic's queue datas from the nameservers; undefined when no nameserver knows the topic. */
export type RouteFetcher = (topic: string) => Promise<RouteQueueData[] | undefined>;

/** Java MessageQueue.compareTo: topic, then broker name, then queue id. */
export function compareQueues(a: MessageQueue, b: MessageQueue): number {
  if (a.topic !== b.topic) return a.topic < b.topic ? -1 : 1;
  if (a.brokerName !== b.brokerName) return a.brokerName < b.brokerName ? -1 : 1;
  return a.queueId - b.queueId;
}

/** AllocateMessageQueueAveragely: contiguous shares, the first `mod` clients one queue more. */
export function allocateAveragely(clientId: string, mqAll: readonly MessageQueue[], cidAll: readonly string[]): MessageQueue[] {
  const index = cidAll.indexOf(clientId);
  if (index < 0) return [];
  const mod = mqAll.length % cidAll.length;
  const averageSize = mqAll.length <= cidAll.length ? 1
    : mod > 0 && index < mod ? Math.floor(mqAll.length / cidAll.length) + 1 : Math.floor(mqAll.length / cidAll.length);
  const startIndex = mod > 0 && index < mod ? index * averageSize : index * averageSize + mod;
  const range = Math.min(averageSize, mqAll.length - startIndex);
  const out: MessageQueue[] = [];
  for (let i = 0; i < range; i++) out.push(mqAll[(startIndex + i) % mqAll.length]!);
  return out;
}

/** AllocateMessageQueueAveragelyByCircle: every cidAll.length-th queue from the client's index. */
export function allocateByCircle(clientId: string, mqAll: readonly MessageQueue[], cidAll: readonly string[]): MessageQueue[] {
  const index = cidAll.indexOf(clientId);
  if (index < 0) return [];
  const out: MessageQueue[] = [];
  for (let i = index; i < mqAll.length; i += cidAll.length) out.push(mqAll[i]!);
  return out;
}

const STRATEGIES: Record<string, typeof allocateAveragely> = { AVG: allocateAveragely, AVG_BY_CIRCLE: allocateByCircle };

/** QueryAssignmentProcessor.allocate4Pop */
export function allocateForPop(
  strategy: typeof allocateAveragely, clientId: string, mqAll: readonly MessageQueue[], cidAll: readonly string[], popShareQueueNum: number,
): MessageQueue[] {
  if (popShareQueueNum <= 0 || popShareQueueNum >= cidAll.length - 1) {
    // every client pops every queue: one queue id −1 per queue, which collapses to one per broker
    const seen = new Map<string, MessageQueue>();
    for (const mq of mqAll) seen.set(`${mq.topic}\u0000${mq.brokerName}`, { brokerName: mq.brokerName, queueId: -1, topic: mq.topic });
    return [...seen.values()];
  }
  if (cidAll.length <= mqAll.length) {
    const out = strategy(clientId, mqAll, cidAll);
    let index = cidAll.indexOf(clientId);
    if (index >= 0) {
      for (let i = 1; i <= popShareQueueNum; i++) {
        index = (index + 1) % cidAll.length;
        out.push(...strategy(cidAll[index]!, mqAll, cidAll));
      }
    }
    return out;
  }
  const index = cidAll.indexOf(clientId);
  return index < 0 ? [] : [mqAll[index % mqAll.length]!];
}

export class AssignmentService {
  readonly modes: MessageRequestModeManager;
  private readonly routes = new Map<string, { queues: MessageQueue[] | undefined; atMs: number }>();

  constructor(
    private readonly ctx: BrokerContext,
    private readonly fetchRoute: RouteFetcher,
  ) {
    this.modes = new MessageRequestModeManager(ctx.config.storePathRootDir, ctx.logger.child({ component: 'request-mode' }));
  }

  /** The request mode of a (topic, group): the stored one, else PULL for retry topics, else the broker default. */
  modeOf(topic: string, group: string): RequestModeEntry {
    const stored = this.modes.get(topic, group);
    if (stored) return stored;
    const mode: MessageRequestMode = topic.startsWith(RETRY_GROUP_TOPIC_PREFIX) ? 'PULL' : this.ctx.config.defaultMessageRequestMode;
    return { topic, consumerGroup: group, mode, popShareQueueNum: mode === 'POP' ? this.ctx.config.defaultPopShareQueueNum : 0 };
  }

  /** QUERY_ASSIGNMENT: the client's queues and their mode; undefined = "no answer" (the client keeps what it has). */
  async queryAssignment(req: QueryAssignmentRequest): Promise<MessageQueueAssignment[] | undefined> {
    const mode = this.modeOf(req.topic, req.consumerGroup);
    const queues = await this.loadBalance(req, mode);
    return queues?.map((messageQueue) => ({ messageQueue, mode: mode.mode }));
  }

  private async loadBalance(req: QueryAssignmentRequest, mode: RequestModeEntry): Promise<MessageQueue[] | undefined> {
    const mqSet = await this.subscribeQueues(req.topic);
    if (req.messageModel === 'BROADCASTING') return mqSet;
    if (req.messageModel !== 'CLUSTERING' || !mqSet) return undefined;
    if (!this.ctx.config.serverLoadBalancerEnable) return mqSet;
    const group = this.ctx.consumerManager.getConsumerGroupInfo(req.consumerGroup);
    if (!group) return undefined;
    const cidAll = [...group.channels.values()].map((c) => c.clientId).sort();
    const strategy = STRATEGIES[req.strategyName];
    // Java's strategies throw on a blank client id or empty lists, which makes the answer null
    if (!strategy || !req.clientId || req.clientId.trim() === '' || mqSet.length === 0 || cidAll.length === 0) return undefined;
    const mqAll = [...mqSet].sort(compareQueues);
    return mode.mode === 'POP'
      ? allocateForPop(strategy, req.clientId, mqAll, cidAll, mode.popShareQueueNum)
      : strategy(req.clientId, mqAll, cidAll);
  }

  /** TopicRouteInfoManager.getTopicSubscribeInfo: every readable queue of the route. */
  private async subscribeQueues(topic: string): Promise<MessageQueue[] | undefined> {
    const cached = this.routes.get(topic);
    if (cached && Date.now() - cached.atMs < ROUTE_CACHE_MS && cached.queues) return cached.queues;
    let datas: RouteQueueData[] | undefined;
    try {
      datas = await this.fetchRoute(topic);
    } catch (err) {
      this.ctx.logger.warn({ err, topic }, 'route lookup for QUERY_ASSIGNMENT failed');
      return cached?.queues;
    }
    const queues = datas?.flatMap((qd) => (isReadable(qd.perm)
      ? Array.from({ length: qd.readQueueNums }, (_, queueId) => ({ brokerName: qd.brokerName, queueId, topic }))
      : []));
    this.routes.set(topic, { queues, atMs: Date.now() });
    return queues;
  }

  /** SET_MESSAGE_REQUEST_MODE */
  setRequestMode(entry: RequestModeEntry): Refusal | undefined {
    if (entry.topic.startsWith(RETRY_GROUP_TOPIC_PREFIX)) return refusal(ResponseCode.NO_PERMISSION, 'retry topic is not allowed to set mode');
    if (!this.ctx.topicConfigManager.get(entry.topic)) return refusal(ResponseCode.TOPIC_NOT_EXIST, `topic[${entry.topic}] not exist`);
    if (!this.ctx.subscriptionGroupManager.findSubscriptionGroupConfig(entry.consumerGroup)) {
      return refusal(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, 'subscription group does not exist');
    }
    this.modes.set(entry);
    return undefined;
  }
}
