// What a request needs under ACL 2.0 (Java auth/authorization/builder/DefaultAuthorizationContextBuilder): the
// explicit cases of its switch, then the request headers' @RocketMQAction / @RocketMQResource annotations for the
// codes this broker serves. Codes with neither need no authorization (as in Java).
import { parseFastjson } from '../../common/fastjson.js';
import { RequestCode } from '../../common/request-code.js';
import type { RemotingCommand } from '../../remoting/command.js';
import type { Action, Resource } from './auth-model.js';

export interface AuthzNeed {
  resource: Resource;
  actions: Action[];
}

const RETRY = '%RETRY%';
const topic = (name: string | undefined): Resource => ({ type: 'Topic', name: name ?? null, pattern: 'LITERAL' });
/** Java Resource.ofGroup: a %RETRY% topic names its group. */
const group = (name: string | undefined): Resource => ({ type: 'Group', name: name?.startsWith(RETRY) ? name.slice(RETRY.length) : (name ?? null), pattern: 'LITERAL' });
const isRetry = (t: string | undefined) => t?.startsWith(RETRY) === true;
const blank = (s: string | undefined) => s === undefined || s.trim() === '';

/** 5.x POP request codes (RequestCode.POP_MESSAGE ...; BATCH_ACK_MESSAGE has no annotated header, so no check). */
const POP = { POP_MESSAGE: 200050, ACK_MESSAGE: 200051, PEEK_MESSAGE: 200052, CHANGE_MESSAGE_INVISIBLETIME: 200053, NOTIFICATION: 200054, POLLING_INFO: 200055 } as const;

/** code → [actions, resource fields (type, header field) in the header class's declaration order, cluster resource when no field is set]. */
type Annotated = { actions: Action[]; fields: Array<['Topic' | 'Group', string]>; cluster?: boolean };
const ANNOTATED = new Map<number, Annotated>([
  [RequestCode.RECALL_MESSAGE, { actions: ['Pub'], fields: [['Topic', 'topic']] }],
  [RequestCode.UPDATE_AND_GET_GROUP_FORBIDDEN, { actions: ['Update'], fields: [['Group', 'group'], ['Topic', 'topic']] }],
  [RequestCode.RESUME_CHECK_HALF_MESSAGE, { actions: ['Update'], fields: [['Topic', 'topic']] }],
  [RequestCode.UPDATE_AND_CREATE_TOPIC, { actions: ['Create'], fields: [['Topic', 'topic']] }],
  [RequestCode.DELETE_TOPIC_IN_BROKER, { actions: ['Delete'], fields: [['Topic', 'topic']] }],
  [RequestCode.GET_TOPIC_STATS_INFO, { actions: ['Get'], fields: [['Topic', 'topic']] }],
  [RequestCode.GET_TOPIC_CONFIG, { actions: ['Get'], fields: [['Topic', 'topic']] }],
  [RequestCode.GET_CONSUME_STATS, { actions: ['Get'], fields: [['Group', 'consumerGroup'], ['Topic', 'topic']] }],
  [RequestCode.GET_CONSUMER_CONNECTION_LIST, { actions: ['Get'], fields: [['Group', 'consumerGroup']] }],
  [RequestCode.GET_PRODUCER_CONNECTION_LIST, { actions: ['Get'], fields: [], cluster: true }],
  [RequestCode.GET_MAX_OFFSET, { actions: ['Get'], fields: [['Topic', 'topic']] }],
  [RequestCode.GET_MIN_OFFSET, { actions: ['Get'], fields: [['Topic', 'topic']] }],
  [RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, { actions: ['Get'], fields: [['Topic', 'topic']] }],
  [RequestCode.GET_EARLIEST_MSG_STORETIME, { actions: ['Get'], fields: [['Topic', 'topic']] }],
  [RequestCode.VIEW_MESSAGE_BY_ID, { actions: ['Get'], fields: [['Topic', 'topic']] }],
  [RequestCode.QUERY_TOPIC_CONSUME_BY_WHO, { actions: ['Get'], fields: [['Topic', 'topic']] }],
  [RequestCode.DELETE_SUBSCRIPTIONGROUP, { actions: ['Delete'], fields: [['Group', 'groupName']] }],
  [RequestCode.QUERY_CONSUME_TIME_SPAN, { actions: ['Get'], fields: [['Topic', 'topic'], ['Group', 'group']] }],
  [RequestCode.CLONE_GROUP_OFFSET, { actions: ['Update'], fields: [['Group', 'destGroup'], ['Topic', 'topic']] }],
  [RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, { actions: ['Update'], fields: [['Group', 'group'], ['Topic', 'topic']] }],
  [RequestCode.GET_CONSUMER_RUNNING_INFO, { actions: ['Get'], fields: [['Group', 'consumerGroup']] }],
  [RequestCode.QUERY_TOPICS_BY_CONSUMER, { actions: ['Get'], fields: [['Group', 'group']] }],
  [RequestCode.GET_SUBSCRIPTIONGROUP_CONFIG, { actions: ['Get'], fields: [['Group', 'group']] }],
  [RequestCode.GET_BROKER_CONSUME_STATS, { actions: ['Get'], fields: [], cluster: true }],
  [RequestCode.VIEW_BROKER_STATS_DATA, { actions: ['Get'], fields: [], cluster: true }],
  [RequestCode.GET_ALL_PRODUCER_INFO, { actions: ['Get'], fields: [], cluster: true }],
  [RequestCode.QUERY_CONSUME_QUEUE, { actions: ['Get'], fields: [['Topic', 'topic'], ['Group', 'consumerGroup']] }],
  [POP.POP_MESSAGE, { actions: ['Sub'], fields: [['Group', 'consumerGroup'], ['Topic', 'topic']] }],
  [POP.ACK_MESSAGE, { actions: ['Sub'], fields: [['Group', 'consumerGroup'], ['Topic', 'topic']] }],
  [POP.CHANGE_MESSAGE_INVISIBLETIME, { actions: ['Sub'], fields: [['Group', 'consumerGroup'], ['Topic', 'topic']] }],
  [POP.PEEK_MESSAGE, { actions: ['Sub'], fields: [['Topic', 'topic'], ['Group', 'consumerGroup']] }],
  [POP.NOTIFICATION, { actions: ['Sub'], fields: [['Group', 'consumerGroup'], ['Topic', 'topic']] }],
  [POP.POLLING_INFO, { actions: ['Get'], fields: [['Group', 'consumerGroup'], ['Topic', 'topic']] }],
  [RequestCode.AUTH_CREATE_USER, { actions: ['Update'], fields: [], cluster: true }],
  [RequestCode.AUTH_UPDATE_USER, { actions: ['Update'], fields: [], cluster: true }],
  [RequestCode.AUTH_DELETE_USER, { actions: ['Update'], fields: [], cluster: true }],
  [RequestCode.AUTH_GET_USER, { actions: ['Get'], fields: [], cluster: true }],
  [RequestCode.AUTH_LIST_USER, { actions: ['Get'], fields: [], cluster: true }],
  [RequestCode.AUTH_CREATE_ACL, { actions: ['Update'], fields: [], cluster: true }],
  [RequestCode.AUTH_UPDATE_ACL, { actions: ['Update'], fields: [], cluster: true }],
  [RequestCode.AUTH_DELETE_ACL, { actions: ['Update'], fields: [], cluster: true }],
  [RequestCode.AUTH_GET_ACL, { actions: ['Get'], fields: [], cluster: true }],
  [RequestCode.AUTH_LIST_ACL, { actions: ['Get'], fields: [], cluster: true }],
]);

export function authzNeeds(req: RemotingCommand, clusterName: string): AuthzNeed[] {
  const f = req.extFields;
  const out: AuthzNeed[] = [];
  const add = (resource: Resource, ...actions: Action[]) => out.push({ resource, actions });
  switch (req.code) {
    case RequestCode.SEND_MESSAGE:
      if (isRetry(f.topic)) add(group(blank(f.group) ? f.topic : f.group), 'Sub');
      else add(topic(f.topic), 'Pub');
      return out;
    case RequestCode.SEND_MESSAGE_V2:
    case RequestCode.SEND_BATCH_MESSAGE:
      if (isRetry(f.b)) add(group(blank(f.a) ? f.b : f.a), 'Sub');
      else add(topic(f.b), 'Pub');
      return out;
    case RequestCode.END_TRANSACTION:
      if (!blank(f.topic)) add(topic(f.topic), 'Pub');
      return out;
    case RequestCode.CONSUMER_SEND_MSG_BACK:
      add(group(f.group), 'Sub');
      return out;
    case RequestCode.PULL_MESSAGE:
      if (!isRetry(f.topic)) add(topic(f.topic), 'Sub');
      add(group(f.consumerGroup), 'Sub');
      return out;
    case RequestCode.QUERY_MESSAGE:
      add(topic(f.topic), 'Sub', 'Get');
      return out;
    case RequestCode.HEART_BEAT: {
      const hb = req.body ? (parseFastjson(req.body.toString('utf8')) as { consumerDataSet?: unknown }) : {};
      for (const data of (Array.isArray(hb?.consumerDataSet) ? hb.consumerDataSet : []) as Array<{ groupName?: string; subscriptionDataSet?: Array<{ topic?: string }> }>) {
        add(group(data.groupName), 'Sub');
        for (const sub of data.subscriptionDataSet ?? []) if (!isRetry(sub.topic)) add(topic(sub.topic), 'Sub');
      }
      return out;
    }
    case RequestCode.UNREGISTER_CLIENT:
      if (!blank(f.consumerGroup)) add(group(f.consumerGroup), 'Sub');
      return out;
    case RequestCode.GET_CONSUMER_LIST_BY_GROUP:
      add(group(f.consumerGroup), 'Sub', 'Get');
      return out;
    case RequestCode.QUERY_CONSUMER_OFFSET:
      if (!isRetry(f.topic)) add(topic(f.topic), 'Sub', 'Get');
      add(group(f.consumerGroup), 'Sub', 'Get');
      return out;
    case RequestCode.UPDATE_CONSUMER_OFFSET:
      if (!isRetry(f.topic)) add(topic(f.topic), 'Sub', 'Update');
      add(group(f.consumerGroup), 'Sub', 'Update');
      return out;
    case RequestCode.LOCK_BATCH_MQ:
    case RequestCode.UNLOCK_BATCH_MQ: {
      const body = req.body ? (parseFastjson(req.body.toString('utf8')) as { consumerGroup?: string; mqSet?: Array<{ topic?: string }> }) : {};
      add(group(body.consumerGroup), 'Sub');
      for (const mq of body.mqSet ?? []) if (!isRetry(mq.topic)) add(topic(mq.topic), 'Sub');
      return out;
    }
    default: {
      const a = ANNOTATED.get(req.code);
      if (!a) return out;
      for (const [type, field] of a.fields) {
        const v = f[field];
        if (v === undefined) continue;
        if (type === 'Topic' && isRetry(v)) add(group(v), ...a.actions);
        else add({ type, name: v, pattern: 'LITERAL' }, ...a.actions);
      }
      if (out.length === 0 && a.cluster) add({ type: 'Cluster', name: clusterName, pattern: 'LITERAL' }, ...a.actions);
      return out;
    }
  }
}
