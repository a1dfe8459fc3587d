// Name and field checks every RPC applies before touching the broker (Java proxy grpc/v2/common/GrpcValidator and
// client Validators.checkTopic / checkGroup), with the proxy's codes and texts.
import { GrpcStatusError } from './status.js';

const NAME_PATTERN = /^[%|a-zA-Z0-9_-]+$/;
const TOPIC_MAX_LENGTH = 127;
const GROUP_MAX_LENGTH = 255;

/** Java TopicValidator.SYSTEM_TOPIC_SET and the rmq_sys_ prefix. */
const SYSTEM_TOPICS = new Set([
  'TBW102', 'SCHEDULE_TOPIC_XXXX', 'BenchmarkTest', 'RMQ_SYS_TRANS_HALF_TOPIC', 'RMQ_SYS_TRACE_TOPIC',
  'RMQ_SYS_TRANS_OP_HALF_TOPIC', 'TRANS_CHECK_MAX_TIME_TOPIC', 'SELF_TEST_TOPIC', 'OFFSET_MOVED_EVENT', 'CHECKPOINT_TOPIC',
]);

export function isSystemTopic(topic: string): boolean {
  return SYSTEM_TOPICS.has(topic) || topic.startsWith('rmq_sys_');
}

const isBlank = (s: string): boolean => s.trim() === '';

/** Java CharMatcher.javaIsoControl: U+0000–U+001F and U+007F–U+009F. */
export function containsControlCharacter(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c <= 0x1f || (c >= 0x7f && c <= 0x9f)) return true;
  }
  return false;
}

interface Resource {
  name?: string;
}

export function validateTopic(topic: Resource | null | undefined): string {
  const name = topic?.name ?? '';
  if (isBlank(name)) throw new GrpcStatusError('ILLEGAL_TOPIC', 'The specified topic is blank');
  if (name.length > TOPIC_MAX_LENGTH) {
    throw new GrpcStatusError('ILLEGAL_TOPIC', `The specified topic is longer than topic max length ${TOPIC_MAX_LENGTH}.`);
  }
  if (!NAME_PATTERN.test(name)) {
    throw new GrpcStatusError('ILLEGAL_TOPIC', `The specified topic[${name}] contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$`);
  }
  if (isSystemTopic(name)) throw new GrpcStatusError('ILLEGAL_TOPIC', 'cannot access system topic');
  return name;
}

export function validateConsumerGroup(group: Resource | null | undefined): string {
  const name = group?.name ?? '';
  if (isBlank(name)) throw new GrpcStatusError('ILLEGAL_CONSUMER_GROUP', 'the specified group is blank');
  if (name.length > GROUP_MAX_LENGTH) {
    throw new GrpcStatusError('ILLEGAL_CONSUMER_GROUP', `the specified group is longer than group max length ${GROUP_MAX_LENGTH}.`);
  }
  if (!NAME_PATTERN.test(name)) {
    throw new GrpcStatusError('ILLEGAL_CONSUMER_GROUP', `the specified group[${name}] contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$`);
  }
  if (name.startsWith('CID_RMQ_SYS_')) throw new GrpcStatusError('ILLEGAL_CONSUMER_GROUP', 'cannot use system consumer group');
  return name;
}

export function validateTag(tag: string): void {
  if (tag === '') return;
  if (isBlank(tag)) throw new GrpcStatusError('ILLEGAL_MESSAGE_TAG', 'tag cannot be the char sequence of whitespace');
  if (tag.includes('|')) throw new GrpcStatusError('ILLEGAL_MESSAGE_TAG', "tag cannot contain '|'");
  if (containsControlCharacter(tag)) throw new GrpcStatusError('ILLEGAL_MESSAGE_TAG', 'tag cannot contain control character');
}

export function validateInvisibleTime(invisibleMs: number, minMs: number, maxMs: number): void {
  if (invisibleMs < minMs) throw new GrpcStatusError('ILLEGAL_INVISIBLE_TIME', `the invisibleTime is too small. min is ${minMs}`);
  if (maxMs > 0 && invisibleMs > maxMs) throw new GrpcStatusError('ILLEGAL_INVISIBLE_TIME', `the invisibleTime is too large. max is ${maxMs}`);
}

/** google.protobuf.Duration / Timestamp as milliseconds (Java Durations.toMillis / Timestamps.toMillis). */
export function toMillis(d: { seconds?: number | string; nanos?: number } | null | undefined): number {
  if (!d) return 0;
  return Number(d.seconds ?? 0) * 1000 + Math.trunc((d.nanos ?? 0) / 1_000_000);
}

export function fromMillis(ms: number): { seconds: number; nanos: number } {
  const seconds = Math.floor(ms / 1000);
  return { seconds, nanos: (ms - seconds * 1000) * 1_000_000 };
}
