import { internString } from '../../common/intern.js';
/** Permission bits (Java: common/constant/PermName.java). */
export const Perm = {
  PRIORITY: 8,
  READ: 4,
  WRITE: 2,
  INHERIT: 1,
} as const;

export const isReadable = (perm: number): boolean => (perm & Perm.READ) === Perm.READ;
export const isWriteable = (perm: number): boolean => (perm & Perm.WRITE) === Perm.WRITE;
export const isInherited = (perm: number): boolean => (perm & Perm.INHERIT) === Perm.INHERIT;

/** Java TopicConfig, with the field names fastjson writes. */
export interface TopicConfig {
  topicName: string;
  readQueueNums: number;
  writeQueueNums: number;
  perm: number;
  topicFilterType: string;
  topicSysFlag: number;
  order: boolean;
  attributes: Record<string, string>;
}

export function newTopicConfig(name: string, queues: number, perm = Perm.READ | Perm.WRITE): TopicConfig {
  return {
    // The one object sends swap their header's topic for (checkMessage), so the store's maps compare pointers.
    topicName: internString(name),
    readQueueNums: queues,
    writeQueueNums: queues,
    perm,
    topicFilterType: 'SINGLE_TAG',
    topicSysFlag: 0,
    order: false,
    attributes: {},
  };
}

/** System topic names (Java: common/topic/TopicValidator.java, MixAll.java). */
export const SystemTopic = {
  AUTO_CREATE_TOPIC_KEY: 'TBW102',
  SELF_TEST: 'SELF_TEST_TOPIC',
  BENCHMARK: 'BenchmarkTest',
  OFFSET_MOVED_EVENT: 'OFFSET_MOVED_EVENT',
  SCHEDULE_TOPIC: 'SCHEDULE_TOPIC_XXXX',
  TRANS_HALF: 'RMQ_SYS_TRANS_HALF_TOPIC',
  TRANS_OP_HALF: 'RMQ_SYS_TRANS_OP_HALF_TOPIC',
  TRANS_CHECK_MAX_TIME: 'TRANS_CHECK_MAX_TIME_TOPIC',
  /** TimerMessageStore.TIMER_TOPIC; created (1 queue) when timerWheelEnable. */
  TIMER_TOPIC: 'rmq_sys_wheel_timer',
  /** PopAckConstants.REVIVE_TOPIC: + the cluster name; reviveQueueNum queues. */
  REVIVE_LOG_PREFIX: 'rmq_sys_REVIVE_LOG_',
} as const;

export const RETRY_GROUP_TOPIC_PREFIX = '%RETRY%';
export const DLQ_GROUP_TOPIC_PREFIX = '%DLQ%';

export const retryTopic = (group: string): string => RETRY_GROUP_TOPIC_PREFIX + group;
export const dlqTopic = (group: string): string => DLQ_GROUP_TOPIC_PREFIX + group;

const TOPIC_PATTERN = /^[%|a-zA-Z0-9_-]+$/;
export const TOPIC_MAX_LENGTH = 127;

/** Java TopicValidator.validateTopic: returns an error remark, or undefined when the name is fine. */
export function validateTopicName(topic: string): string | undefined {
  if (!topic) return 'The specified topic is blank.';
  if (!TOPIC_PATTERN.test(topic)) return `The specified topic[${topic}] contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$`;
  if (topic.length > TOPIC_MAX_LENGTH) return `The specified topic is longer than topic max length ${TOPIC_MAX_LENGTH}.`;
  return undefined;
}
