// QueryRoute and QueryAssignment (Java proxy grpc/v2/route/RouteActivity). Routes come from this broker's own topic
// table and name this endpoint: a gRPC client that dialled this broker sends and receives here. The endpoint
// echoes the host the client dialled with the port it is bound to (robust under grpcServerPort=0 and port mapping).
import { isReadable, isWriteable, type TopicConfig } from '../broker/topic/topic-config.js';
import type { GrpcServices, Msg, UnaryHandler } from './services.js';
import { GrpcStatusError, OK, status } from './status.js';
import { validateConsumerGroup, validateTopic } from './validators.js';

/** Java TopicMessageType by the topic attribute `message.type`; absent = NORMAL, unknown topic = UNSPECIFIED. */
export function topicMessageType(tc: TopicConfig | undefined): string {
  if (!tc) return 'UNSPECIFIED';
  const t = tc.attributes?.['message.type'];
  return t === undefined || t === '' ? 'NORMAL' : t.toUpperCase();
}

function acceptMessageTypes(type: string): string[] {
  switch (type) {
    case 'NORMAL':
    case 'FIFO':
    case 'DELAY':
    case 'TRANSACTION':
      return [type];
    case 'MIXED':
      return ['NORMAL', 'FIFO', 'DELAY', 'TRANSACTION'];
    default:
      return ['MESSAGE_TYPE_UNSPECIFIED'];
  }
}

function permissionOf(perm: number): string {
  const r = isReadable(perm);
  const w = isWriteable(perm);
  return r && w ? 'READ_WRITE' : r ? 'READ' : w ? 'WRITE' : 'NONE';
}

/** This broker as a route Broker: the dialled host (the request's endpoints) and our port. */
function brokerOf(s: GrpcServices, endpoints: Msg | null | undefined): Msg {
  const first = endpoints?.addresses?.[0];
  const host = first?.host ? String(first.host) : s.config.brokerIP1;
  const scheme = endpoints?.scheme && endpoints.scheme !== 'ADDRESS_SCHEME_UNSPECIFIED' ? endpoints.scheme : 'IPv4';
  return { name: s.config.brokerName, id: 0, endpoints: { scheme, addresses: [{ host, port: s.port() }] } };
}

/** The topic, created on first use when autoCreateTopicEnable (as a remoting send would; the proxy never creates). */
async function topicOrCreate(s: GrpcServices, topic: string): Promise<TopicConfig | undefined> {
  const existing = s.ctx.topicConfigManager.get(topic);
  if (existing || !s.config.autoCreateTopicEnable) return existing;
  const tc = s.ctx.topicConfigManager.createTopicInSendMessageMethod(topic, 'TBW102', s.config.defaultTopicQueueNums, 0);
  if (tc) await s.ctx.registerBrokerAll();
  return tc;
}

export function topicNotFound(topic: string): GrpcStatusError {
  // The text the nameserver's answer gives through the proxy (two spaces after the code, as Java formats it).
  return new GrpcStatusError(
    'TOPIC_NOT_FOUND',
    `CODE: 17  DESC: No topic route info in name server for the topic: ${topic}\nFor more information, please visit the url, https://rocketmq.apache.org/docs/bestPractice/06FAQ`,
  );
}

/** Java RouteActivity.genMessageQueueFromQueueData: read-only ids first, then write-only, read-write, none. */
export function messageQueuesOf(tc: TopicConfig, topic: Msg, broker: Msg): Msg[] {
  let r = 0;
  let w = 0;
  let rw = 0;
  let n = 0;
  const readable = isReadable(tc.perm);
  const writeable = isWriteable(tc.perm);
  if (readable && writeable) {
    rw = Math.min(tc.writeQueueNums, tc.readQueueNums);
    r = tc.readQueueNums - rw;
    w = tc.writeQueueNums - rw;
  } else if (writeable) w = tc.writeQueueNums;
  else if (readable) r = tc.readQueueNums;
  else n = Math.max(1, tc.writeQueueNums, tc.readQueueNums);
  const accept = acceptMessageTypes(topicMessageType(tc));
  const out: Msg[] = [];
  let id = 0;
  const add = (count: number, permission: string) => {
    for (let i = 0; i < count; i++) out.push({ topic, id: id++, permission, broker, accept_message_types: accept });
  };
  add(r, 'READ');
  add(w, 'WRITE');
  add(rw, 'READ_WRITE');
  add(n, 'NONE');
  return out;
}

export function queryRoute(s: GrpcServices): UnaryHandler {
  return async (req) => {
    const topic = validateTopic(req.topic);
    const tc = await topicOrCreate(s, topic);
    if (!tc) throw topicNotFound(topic);
    return { status: OK, message_queues: messageQueuesOf(tc, req.topic, brokerOf(s, req.endpoints)) };
  };
}

/** Java RouteActivity.queryAssignment: an orderly group gets every read queue, others one queue id −1 (any queue). */
export function queryAssignment(s: GrpcServices): UnaryHandler {
  return (req) => {
    const topic = validateTopic(req.topic);
    const group = validateConsumerGroup(req.group);
    const tc = s.ctx.topicConfigManager.get(topic);
    if (!tc) throw topicNotFound(topic);
    const fifo = s.ctx.subscriptionGroupManager.get(group)?.consumeMessageOrderly === true;
    const assignments: Msg[] = [];
    if (isReadable(tc.perm) && tc.readQueueNums > 0) {
      const broker = brokerOf(s, req.endpoints);
      const permission = permissionOf(tc.perm);
      const ids = fifo ? [...Array(tc.readQueueNums).keys()] : [-1];
      for (const id of ids) assignments.push({ message_queue: { topic: req.topic, id, permission, broker } });
    }
    if (assignments.length === 0) return { status: status('FORBIDDEN', 'no readable queue') };
    return { status: OK, assignments };
  };
}
