// One pop's reading (Java PopMessageProcessor.popMsgFromTopic / popMsgFromQueue with enablePopBufferMerge=false):
// per queue, under the queue's try-lock, read from the group's offset through the request's filter, then either
// append a checkpoint (non-orderly) or record the FIFO batch (orderly), and only then move the group's offset.
// A queue whose checkpoint could not be stored hands out nothing; skipped (filtered) entries just move the offset.
import { parseProperties } from '../../common/message-properties.js';
import { type GetResult, type MessageFilter, RecordPos, decodeRecord, encodeRecord, readInt64 } from '../../store/index.js';
import { messageFromRecord } from '../stored-message.js';
import {
  appendMsgOffsetInfo, appendOffsetOrderCount, appendQueueOrderCount, appendStartOffsetInfo, buildExtraInfo,
} from './extra-info.js';
import type { PopCore } from './pop-core.js';
import { queueKey } from './pop-keys.js';
import { type CheckPoint, checkPointMessage } from './pop-records.js';

/** Java MessageConst.PROPERTY_POP_CK: the 8-field extraInfo a retry record carries in a pop answer. */
export const PROPERTY_POP_CK = 'POP_CK';
/** Java MessageConst.PROPERTY_FIRST_POP_TIME */
export const PROPERTY_FIRST_POP_TIME = '1ST_POP_TIME';
/** Java caps a pop like a pull; we also keep every answer far below the 16 MiB frame limit. */
export const MAX_POP_BODY_BYTES = 8 * 1024 * 1024;

/** One message handed out by a pop. */
export interface PoppedMessage {
  /** The record as it travels in the remoting answer (retry records re-encoded with the requested topic and POP_CK). */
  record: Buffer;
  /** The topic the message is stored on (the POP retry topic for a retried message): what acks name. */
  storedTopic: string;
  queueId: number;
  queueOffset: number;
  commitLogOffset: number;
  /** The 9-field receipt handle (extraInfo + commit-log offset), as the proxy hands it to gRPC clients. */
  receiptHandle: string;
  /** The record's reconsume times, or for an orderly pop the times this offset was handed out before. */
  reconsumeTimes: number;
}

/** What one pop request collects while it reads queues. */
export interface PopSession {
  group: string;
  /** The requested (normal) topic. */
  topic: string;
  maxMsgNums: number;
  invisibleTime: number;
  initMode: number;
  order: boolean;
  attemptId?: string;
  filter?: MessageFilter;
  popTime: number;
  reviveQid: number;
  restNum: number;
  bytes: number;
  startOffsetInfo: string[];
  msgOffsetInfo: string[];
  orderCountInfo: string[];
  messages: PoppedMessage[];
}

const STORE_OFFSET_WRONG = new Set(['OFFSET_TOO_SMALL', 'OFFSET_OVERFLOW_BADLY', 'OFFSET_FOUND_NULL']);
const SKIPPED = new Set(['NO_MATCHED_MESSAGE', 'OFFSET_FOUND_NULL', 'MESSAGE_WAS_REMOVING', 'NO_MATCHED_LOGIC_QUEUE']);

/** Every read queue of `topic`, starting at randomQ (popMsgFromTopic); a topic that does not exist is skipped. */
export async function popFromTopic(core: PopCore, s: PopSession, topic: string, isRetry: boolean, randomQ: number): Promise<void> {
  const tc = core.ctx.topicConfigManager.get(topic);
  if (!tc) return;
  for (let i = 0; i < tc.readQueueNums; i++) {
    await popFromQueue(core, s, topic, isRetry, (randomQ + i) % tc.readQueueNums);
  }
}

export async function popFromQueue(core: PopCore, s: PopSession, topic: string, isRetry: boolean, queueId: number): Promise<void> {
  const { ctx } = core;
  const { store, consumerOffsetManager } = ctx;
  const key = queueKey(topic, s.group, queueId);
  let offset = await core.popOffset(topic, s.group, queueId, s.initMode, false);
  if (!core.locks.tryLock(key)) {
    if (!s.order) s.restNum += store.getMaxOffsetInQueue(topic, queueId) - offset;
    return;
  }
  try {
    offset = await core.popOffset(topic, s.group, queueId, s.initMode, true);
    // An orderly queue whose batch is out and not visible again gives nothing (and adds no backlog).
    if (s.order && core.orderInfo.checkBlock(s.attemptId, topic, s.group, queueId, s.invisibleTime)) return;
    // an orderly queue hands its batch out again from the group's offset: what was in flight is counted anew
    if (s.order) ctx.popInflight?.clear(topic, s.group, queueId);
    if (s.messages.length >= s.maxMsgNums || s.bytes >= MAX_POP_BODY_BYTES) {
      s.restNum += store.getMaxOffsetInQueue(topic, queueId) - offset;
      return;
    }
    const startOffset = offset;
    const maxBytes = Math.min(ctx.config.maxTransferBytesOnMessageInMemory, MAX_POP_BODY_BYTES - s.bytes);
    let result: GetResult = await store.getMessage(topic, queueId, offset, s.maxMsgNums - s.messages.length, maxBytes, s.filter);
    if (STORE_OFFSET_WRONG.has(result.status)) {
      // the group's offset is outside the queue: start again where the store says (PopMessageProcessor does too)
      consumerOffsetManager.commitOffset(s.group, topic, queueId, result.nextBeginOffset);
      offset = result.nextBeginOffset;
      result = await store.getMessage(topic, queueId, offset, s.maxMsgNums - s.messages.length, maxBytes, s.filter);
    }
    const offsets = result.records.map((r) => readInt64(r, RecordPos.QUEUE_OFFSET));
    let orderCounts: Map<number, number> | undefined;
    let minOrderCount = 0;
    if (result.records.length > 0) {
      if (s.order) {
        const counts = core.orderInfo.update(s.attemptId, topic, s.group, queueId, s.popTime, s.invisibleTime, offsets);
        orderCounts = new Map(counts.perOffset);
        minOrderCount = counts.minCount;
        for (const [o, c] of counts.perOffset) appendOffsetOrderCount(s.orderCountInfo, topic, queueId, o, c);
        appendQueueOrderCount(s.orderCountInfo, topic, queueId, counts.minCount);
        // the offset stays at the batch start until the batch is acked
        consumerOffsetManager.commitOffset(s.group, topic, queueId, startOffset);
      } else {
        const stored = await appendCheckPoint(core, s, topic, queueId, startOffset, offsets);
        if (!stored) {
          s.restNum += result.records.length;
          return;
        }
        consumerOffsetManager.commitOffset(s.group, topic, queueId, result.nextBeginOffset);
      }
      ctx.popInflight?.increment(topic, s.group, queueId, result.records.length);
      appendStartOffsetInfo(s.startOffsetInfo, topic, queueId, startOffset);
      appendMsgOffsetInfo(s.msgOffsetInfo, topic, queueId, offsets);
    } else if (SKIPPED.has(result.status) && result.nextBeginOffset > -1) {
      // nothing handed out, but entries were passed over (filtered, missing): the offset moves past them
      consumerOffsetManager.commitOffset(s.group, topic, queueId, result.nextBeginOffset);
    }
    s.restNum += result.maxOffset - result.nextBeginOffset;

    let bytes = 0;
    for (let i = 0; i < result.records.length; i++) {
      const raw = result.records[i]!;
      bytes += raw.length;
      const queueOffset = offsets[i]!;
      const commitLogOffset = readInt64(raw, RecordPos.PHYSICAL_OFFSET);
      const extraInfo = buildExtraInfo(startOffset, s.popTime, s.invisibleTime, s.reviveQid, topic, core.brokerName, queueId, queueOffset);
      let record = raw;
      // Retry records travel with the requested topic and their POP_CK (popResponseReturnActualRetryTopic=false).
      if (isRetry && !ctx.config.popResponseReturnActualRetryTopic) record = reencodeRetryRecord(raw, s.topic, extraInfo);
      const recordTimes = raw.readInt32BE(reconsumeTimesPos(raw));
      const count = orderCounts?.get(queueOffset) ?? minOrderCount;
      s.messages.push({
        record, storedTopic: topic, queueId, queueOffset, commitLogOffset,
        receiptHandle: `${extraInfo} ${commitLogOffset}`,
        reconsumeTimes: s.order && count > 0 ? count : recordTimes,
      });
      s.bytes += record.length;
    }
    ctx.stats.msgGetTotal += result.records.length;
    ctx.stats.items.countGet(ctx.config.brokerClusterName, topic, s.group, result.records.length, bytes);
    ctx.stats.metrics?.messagesPopped(s.topic, s.group, isRetry, result.records.length, bytes);
  } finally {
    core.locks.unlock(key);
  }
}

/** Appends the checkpoint of one queue's part of the pop (appendCheckPoint → addCkJustOffset). */
async function appendCheckPoint(
  core: PopCore, s: PopSession, topic: string, queueId: number, startOffset: number, offsets: readonly number[],
): Promise<boolean> {
  const ck: CheckPoint = {
    startOffset,
    popTime: s.popTime,
    invisibleTime: s.invisibleTime,
    bitMap: 0,
    num: offsets.length,
    queueId,
    topic,
    group: s.group,
    reviveOffset: 0,
    queueOffsetDiff: offsets.map((o) => o - startOffset),
    brokerName: core.brokerName,
  };
  const msg = checkPointMessage(ck, { reviveTopic: core.reviveTopic, reviveQid: s.reviveQid, host: core.host(), nowMs: Date.now() });
  return core.putReviveRecord(msg, { group: ck.group, topic: ck.topic, type: 'CK' });
}

/** Position of RECONSUMETIMES, which moves with the host lengths. */
function reconsumeTimesPos(raw: Buffer): number {
  const sysFlag = raw.readInt32BE(RecordPos.SYS_FLAG);
  const born = sysFlag & 0x10 ? 20 : 8;
  const store = sysFlag & 0x20 ? 20 : 8;
  return RecordPos.BORN_HOST + born + 8 + store;
}

/**
 * A retry record as a pop answers it: POP_CK added (unless present), topic = the requested topic, encoded again as
 * a whole valid record (Java decodes it, changes both and calls MessageDecoder.encode).
 */
export function reencodeRetryRecord(raw: Buffer, requestedTopic: string, extraInfo: string): Buffer {
  const rec = decodeRecord(raw);
  const props = parseProperties(rec.propertiesString);
  if (!props.has(PROPERTY_POP_CK)) props.set(PROPERTY_POP_CK, extraInfo);
  const msg = messageFromRecord(rec, requestedTopic, rec.queueId, props, { tagsCode: 0 });
  return encodeRecord(msg, rec.queueOffset, rec.commitLogOffset, rec.storeTimestamp);
}

