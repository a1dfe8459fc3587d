// Topic and group names checked on every admin code before its processor runs, with the official rules (Java
// TopicValidator: characters ^[%|a-zA-Z0-9_-]+$, topics at most 127 characters; groups at most 255, Validators
// CHARACTER_MAX_LENGTH): a bad name gets INVALID_PARAMETER and a short remark instead of reaching the store (a
// 70,000-character topic once came back as ENAMETOOLONG with the store's path). One table, code → fields.
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { type RemotingCommand, createResponse } from '../../remoting/command.js';
import type { Processor, ProcessorTable } from '../../remoting/dispatcher.js';
import { TOPIC_MAX_LENGTH } from '../topic/topic-config.js';

/** Java Validators.CHARACTER_MAX_LENGTH: a group name's limit. */
export const GROUP_MAX_LENGTH = 255;
const NAME_PATTERN = /^[%|a-zA-Z0-9_-]+$/;
/** How much of a bad name a remark repeats. */
const SHOWN_NAME_CHARS = 64;

interface NameFields {
  topics?: readonly string[];
  groups?: readonly string[];
  /** `;`-separated topic lists. */
  topicLists?: readonly string[];
}

/** Admin request codes and the header fields that carry names. Absent or blank fields are left to the processor. */
export const ADMIN_NAME_FIELDS: ReadonlyMap<number, NameFields> = new Map<number, NameFields>([
  [RequestCode.UPDATE_AND_CREATE_TOPIC, { topics: ['topic'] }],
  [RequestCode.DELETE_TOPIC_IN_BROKER, { topics: ['topic'] }],
  [RequestCode.GET_TOPIC_CONFIG, { topics: ['topic'] }],
  [RequestCode.GET_TOPIC_STATS_INFO, { topics: ['topic'] }],
  [RequestCode.QUERY_TOPIC_CONSUME_BY_WHO, { topics: ['topic'] }],
  [RequestCode.QUERY_CONSUME_QUEUE, { topics: ['topic'], groups: ['consumerGroup'] }],
  [RequestCode.DELETE_SUBSCRIPTIONGROUP, { groups: ['groupName'] }],
  [RequestCode.GET_SUBSCRIPTIONGROUP_CONFIG, { groups: ['group'] }],
  // Java checks neither name here; the table it writes is saved whole on every change (fuzz seed 105: 70,000-character
  // names in it made subscriptionGroup.json 573 KB, rewritten and re-encoded on each later change).
  [RequestCode.UPDATE_AND_GET_GROUP_FORBIDDEN, { groups: ['group'], topics: ['topic'] }],
  [RequestCode.GET_CONSUME_STATS, { groups: ['consumerGroup'], topics: ['topic'], topicLists: ['topicList'] }],
  [RequestCode.GET_CONSUMER_CONNECTION_LIST, { groups: ['consumerGroup'] }],
  [RequestCode.GET_PRODUCER_CONNECTION_LIST, { groups: ['producerGroup'] }],
  [RequestCode.QUERY_TOPICS_BY_CONSUMER, { groups: ['group'] }],
  [RequestCode.QUERY_SUBSCRIPTION_BY_CONSUMER, { groups: ['group'], topics: ['topic'] }],
  [RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, { groups: ['group'], topics: ['topic'] }],
  [RequestCode.INVOKE_BROKER_TO_GET_CONSUMER_STATUS, { groups: ['group'], topics: ['topic'] }],
  [RequestCode.CLONE_GROUP_OFFSET, { groups: ['srcGroup', 'destGroup'], topics: ['topic'] }],
  [RequestCode.QUERY_CONSUME_TIME_SPAN, { groups: ['group'], topics: ['topic'] }],
  [RequestCode.QUERY_CORRECTION_OFFSET, { groups: ['compareGroup'], topics: ['topic'] }],
  [RequestCode.GET_CONSUMER_RUNNING_INFO, { groups: ['consumerGroup'] }],
  [RequestCode.CONSUME_MESSAGE_DIRECTLY, { groups: ['consumerGroup'], topics: ['topic'] }],
]);

function shown(name: string): string {
  return name.length > SHOWN_NAME_CHARS ? `${name.slice(0, SHOWN_NAME_CHARS)}… (${name.length} characters)` : name;
}

/** The remark for a bad topic name (TopicValidator.validateTopic's wording), or undefined. */
export function topicNameProblem(topic: string): string | undefined {
  if (!NAME_PATTERN.test(topic)) return `The specified topic[${shown(topic)}] contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$`;
  if (topic.length > TOPIC_MAX_LENGTH) return `The specified topic is longer than topic max length ${TOPIC_MAX_LENGTH} (${topic.length}).`;
  return undefined;
}

/** The remark for a bad group name (client Validators.checkGroup's wording), or undefined. */
export function groupNameProblem(group: string): string | undefined {
  if (!NAME_PATTERN.test(group)) return `the specified group[${shown(group)}] contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$`;
  if (group.length > GROUP_MAX_LENGTH) return `the specified group is longer than group max length ${GROUP_MAX_LENGTH} (${group.length}).`;
  return undefined;
}

const present = (v: string | undefined): v is string => v !== undefined && v.trim() !== '';

/** The first bad name a request carries, as a remark naming the field. */
export function nameProblem(req: RemotingCommand, fields: NameFields): string | undefined {
  const ext = req.extFields;
  for (const f of fields.topics ?? []) {
    const v = ext[f];
    const p = present(v) ? topicNameProblem(v) : undefined;
    if (p) return `${f}: ${p}`;
  }
  for (const f of fields.groups ?? []) {
    const v = ext[f];
    const p = present(v) ? groupNameProblem(v) : undefined;
    if (p) return `${f}: ${p}`;
  }
  for (const f of fields.topicLists ?? []) {
    const v = ext[f];
    if (!present(v)) continue;
    for (const t of v.split(';')) {
      const p = t.trim() === '' ? undefined : topicNameProblem(t);
      if (p) return `${f}: ${p}`;
    }
  }
  return undefined;
}

/** The table with a name check in front of every admin code listed in ADMIN_NAME_FIELDS. */
export function withNameChecks(table: ProcessorTable): ProcessorTable {
  return table.map(([code, processor]) => {
    const fields = ADMIN_NAME_FIELDS.get(code);
    if (!fields) return [code, processor] as const;
    const checked: Processor = (req, ctx) => {
      const problem = nameProblem(req, fields);
      return problem ? createResponse(ResponseCode.INVALID_PARAMETER, problem) : processor(req, ctx);
    };
    return [code, checked] as const;
  });
}
