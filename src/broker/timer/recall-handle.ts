// The recall handle a send answers for a timer message (Java RecallMessageHandle.HandleV1): URL-safe Base64 (with
// padding, as Java's Base64.getUrlEncoder) of `v1 <topic> <brokerName> <deliver ms> <UNIQ_KEY>`, space-separated.
// The deliver time is the parked message's TIMER_OUT_MS + 1 (Java: "consider of floor"): a marker due then falls
// into the same wheel slot.
import { MessageConst, getProperty } from '../../common/message-properties.js';
import { RETRY_GROUP_TOPIC_PREFIX } from '../topic/topic-config.js';

export interface RecallHandle {
  topic: string;
  brokerName: string;
  /** As written in the handle (Java keeps the string and parses it with NumberUtils.toLong, -1 when not a long). */
  timestampStr: string;
  uniqKey: string;
}

export function encodeRecallHandle(h: RecallHandle): string {
  return Buffer.from(['v1', h.topic, h.brokerName, h.timestampStr, h.uniqKey].join(' '), 'utf8').toString('base64')
    .replace(/\+/g, '-').replace(/\//g, '_');
}

/** Java decodeHandle; a string says why the handle is refused (Java's text). */
export function decodeRecallHandle(handle: string): RecallHandle | string {
  const invalid = 'recall handle is invalid';
  // Java's URL decoder refuses characters outside the URL-safe alphabet (and '=' except as padding).
  if (!handle || !/^[A-Za-z0-9_-]*={0,2}$/.test(handle) || handle.replace(/=+$/, '').length % 4 === 1) return invalid;
  const items = Buffer.from(handle, 'base64url').toString('utf8').split(' ');
  if (items[0] !== 'v1' || items.length < 5) return invalid;
  return { topic: items[1]!, brokerName: items[2]!, timestampStr: items[3]!, uniqKey: items[4]! };
}

/**
 * The handle for a message as it was stored (Java SendMessageProcessor.attachRecallHandle): only a message the timer
 * hook parked (TIMER_OUT_MS and REAL_TOPIC set), not a retry topic's; batches and send-backs never get one (the
 * callers do not ask). Undefined otherwise, and for a message without UNIQ_KEY (no marker could match it).
 */
export function recallHandleFor(propertiesString: string, brokerName: string): string | undefined {
  if (!propertiesString.includes(MessageConst.TIMER_OUT_MS)) return undefined;
  const outMs = getProperty(propertiesString, MessageConst.TIMER_OUT_MS);
  const realTopic = getProperty(propertiesString, MessageConst.REAL_TOPIC);
  const uniqKey = getProperty(propertiesString, MessageConst.UNIQ_CLIENT_MESSAGE_ID_KEYIDX);
  if (outMs === undefined || !realTopic || realTopic.startsWith(RETRY_GROUP_TOPIC_PREFIX) || !uniqKey) return undefined;
  const out = Number(outMs);
  if (!Number.isSafeInteger(out)) return undefined;
  return encodeRecallHandle({ topic: realTopic, brokerName, timestampStr: String(out + 1), uniqKey });
}
