// Acknowledging popped messages (Java AckMessageProcessor, ChangeInvisibleTimeProcessor; the proxy's
// ForwardMessageToDeadLetterQueue = CONSUMER_SEND_MSG_BACK to the DLQ, then ack). A non-orderly ack is an ACK record
// on the checkpoint's revive queue, due when the checkpoint is; revive then skips the acked message. An orderly ack
// (reviveQid 999) marks the offset in the FIFO batch and moves the group's offset to the first unacked one.
import { ResponseCode } from '../../common/response-code.js';
import { SERVER_VERSION } from '../../common/version.js';
import { type Refusal, refusal } from '../outcome.js';
import { sendMessageBack } from '../send/send-back-service.js';
import { ExtraInfoError, ExtraInfoReader, type ReceiptHandle, buildExtraInfo, encodeReceiptHandle } from './extra-info.js';
import type { PopCore } from './pop-core.js';
import { POP_ORDER_REVIVE_QUEUE, queueKey, realTopicOf } from './pop-keys.js';
import { type AckRecord, type BatchAck, type CheckPoint, ackMessage, checkPointMessage } from './pop-records.js';

export interface AckRequest {
  consumerGroup: string;
  /** The topic the message is stored on (the retry topic for a retried message). */
  topic: string;
  queueId: number;
  /** The message's queue offset. */
  offset: number;
  /** The message's extraInfo (POP_CK) or receipt handle; only its first 6 fields are read. */
  extraInfo: string;
  /** `ip:port` of the consumer, named in remarks. */
  peer: string;
}

export interface ChangeInvisibleRequest extends AckRequest {
  invisibleTime: number;
}

/** A ChangeInvisibleTime answer: the header fields, and the handle the message has from now on. */
export interface ChangedInvisible {
  popTime: number;
  invisibleTime: number;
  reviveQid: number;
  /**
   * The new handle as the cluster proxy builds it (MQClientAPIImpl.changeInvisibleTimeAsync): startOffset = this
   * offset, the broker's popTime and invisibleTime, then the commit-log offset when the old handle had one.
   */
  receiptHandle: string;
}

const malformed = (err: unknown): Refusal => {
  if (err instanceof ExtraInfoError) return refusal(ResponseCode.SYSTEM_ERROR, err.javaText);
  throw err;
};

/** The offset range checks of ACK (offset > max is illegal) and ChangeInvisibleTime (offset ≥ max). */
function checkOffset(core: PopCore, topic: string, queueId: number, offset: number, maxExclusive: boolean): Refusal | undefined {
  const min = core.ctx.store.getMinOffsetInQueue(topic, queueId);
  const max = core.ctx.store.getMaxOffsetInQueue(topic, queueId);
  if (offset < min || offset > max || (maxExclusive && offset === max)) {
    return refusal(ResponseCode.NO_MESSAGE, maxExclusive ? '' : `offset is illegal, key:${topic}@${queueId}, commit:${offset}, store:${min}~${max}`);
  }
  return undefined;
}

/** ACK_MESSAGE. It does not look for the checkpoint: an ack of an expired or unknown handle is accepted. */
export async function ackPopped(core: PopCore, req: AckRequest): Promise<Refusal | undefined> {
  const bad = core.checkQueue(req.topic, req.queueId, req.peer) ?? checkOffset(core, req.topic, req.queueId, req.offset, false);
  if (bad) return bad;
  let ack: AckRecord;
  let rqId: number;
  let invisibleTime: number;
  try {
    const x = new ExtraInfoReader(req.extraInfo);
    const brokerName = x.brokerName;
    rqId = x.reviveQid;
    ack = {
      ackOffset: req.offset, startOffset: x.ckQueueOffset, group: req.consumerGroup, topic: req.topic, queueId: req.queueId,
      popTime: x.popTime, brokerName,
    };
    invisibleTime = x.invisibleTime;
  } catch (err) {
    return malformed(err);
  }
  if (rqId === POP_ORDER_REVIVE_QUEUE) {
    return ackOrderly(core, req.topic, req.consumerGroup, req.queueId, req.offset, ack.popTime, invisibleTime, req.peer);
  }
  // Java logs a failed ack put and answers SUCCESS: the message then simply comes back.
  await core.putReviveRecord(ackMessage(ack, invisibleTime, place(core, rqId)), { group: ack.group, topic: ack.topic, type: 'ACK' });
  core.ctx.popInflight?.decrement(req.topic, req.consumerGroup, req.queueId, ack.popTime, 1);
  return undefined;
}

/** BATCH_ACK_MESSAGE: per BatchAck one bAck record (or orderly acks); bits outside [min, max] are skipped. */
export async function batchAckPopped(core: PopCore, body: { brokerName?: string; acks: BatchAck[] }, peer: string): Promise<Refusal | undefined> {
  if (body.acks.length === 0) return refusal(ResponseCode.NO_MESSAGE, '');
  let outcome: Refusal | undefined;
  for (const b of body.acks) {
    const topic = realTopicOf(b.topic, b.group, b.retry);
    if (topic === undefined) return refusal(ResponseCode.SYSTEM_ERROR, 'java.lang.IllegalArgumentException: getRetry fail, format is wrong');
    const min = core.ctx.store.getMinOffsetInQueue(topic, b.queueId);
    const max = core.ctx.store.getMaxOffsetInQueue(topic, b.queueId);
    const list: number[] = [];
    for (const bit of b.bits) {
      const offset = b.startOffset + bit;
      if (offset < min || offset > max) continue;
      if (b.reviveQueueId === POP_ORDER_REVIVE_QUEUE) {
        outcome = (await ackOrderly(core, topic, b.group, b.queueId, offset, b.popTime, b.invisibleTime, peer)) ?? outcome;
      } else {
        list.push(offset);
      }
    }
    if (b.reviveQueueId === POP_ORDER_REVIVE_QUEUE || list.length === 0) continue;
    const ack: AckRecord = {
      ackOffset: -1, startOffset: b.startOffset, group: b.group, topic, queueId: b.queueId, popTime: b.popTime,
      brokerName: body.brokerName, ackOffsetList: list,
    };
    await core.putReviveRecord(ackMessage(ack, b.invisibleTime, place(core, b.reviveQueueId)), { group: b.group, topic, type: 'ACK' });
    core.ctx.popInflight?.decrement(topic, b.group, b.queueId, b.popTime, list.length);
  }
  return outcome;
}

/** AckMessageProcessor.ackOrderly */
async function ackOrderly(
  core: PopCore, topic: string, group: string, queueId: number, ackOffset: number, popTime: number, invisibleTime: number, peer: string,
): Promise<Refusal | undefined> {
  const offsets = core.ctx.consumerOffsetManager;
  if (ackOffset < offsets.queryOffset(group, topic, queueId)) return undefined;
  const key = queueKey(topic, group, queueId);
  return core.locks.with(key, () => {
    const old = offsets.queryOffset(group, topic, queueId);
    if (ackOffset < old) return undefined;
    const next = core.orderInfo.commitAndNext(topic, group, queueId, ackOffset, popTime);
    if (next > -1) {
      offsets.commitOffset(group, topic, queueId, next);
      if (!core.orderInfo.checkBlock(undefined, topic, group, queueId, invisibleTime)) {
        // Java wakes the queue's own key; gRPC FIFO consumers poll every queue (-1), so they are woken too
        core.wake(topic, group, queueId);
        core.wake(topic, group, -1);
      }
    } else if (next === -1) {
      return refusal(ResponseCode.MESSAGE_ILLEGAL, `offset is illegal, key:${key}, old:${old}, commit:${ackOffset}, next:${next}, /${peer}`);
    } // else −2: an ack of an older batch
    core.ctx.popInflight?.decrement(topic, group, queueId, popTime, 1);
    return undefined;
  });
}

/**
 * CHANGE_MESSAGE_INVISIBLETIME: a new one-message checkpoint due after `invisibleTime`, then an ack of the old
 * one; orderly: the offset's next visible time.
 */
export async function changeInvisible(core: PopCore, req: ChangeInvisibleRequest): Promise<ChangedInvisible | Refusal> {
  const bad = core.checkQueue(req.topic, req.queueId, req.peer) ?? checkOffset(core, req.topic, req.queueId, req.offset, true);
  if (bad) return bad;
  let x: ExtraInfoReader;
  let reviveQid: number;
  let brokerName: string;
  let oldStart: number;
  let oldPopTime: number;
  let oldInvisible: number;
  try {
    x = new ExtraInfoReader(req.extraInfo);
    reviveQid = x.reviveQid;
    oldPopTime = x.popTime;
    if (reviveQid !== POP_ORDER_REVIVE_QUEUE) {
      brokerName = x.brokerName;
      oldStart = x.ckQueueOffset;
      oldInvisible = x.invisibleTime;
    } else {
      brokerName = x.parts[5] ?? core.brokerName;
      oldStart = 0;
      oldInvisible = 0;
    }
  } catch (err) {
    return malformed(err);
  }
  const handleFor = (popTime: number, invisibleTime: number): string => {
    const base = `${buildExtraInfo(req.offset, popTime, invisibleTime, reviveQid, req.topic, brokerName, req.queueId, req.offset)}`;
    const clOffset = x.parts.length >= 9 ? x.parts[8] : undefined;
    return clOffset !== undefined ? `${base} ${clOffset}` : base;
  };
  const offsets = core.ctx.consumerOffsetManager;

  if (reviveQid === POP_ORDER_REVIVE_QUEUE) {
    const zero = { popTime: 0, invisibleTime: 0, reviveQid: 0, receiptHandle: handleFor(0, 0) };
    if (req.offset < offsets.queryOffset(req.consumerGroup, req.topic, req.queueId)) return zero;
    return core.locks.with(queueKey(req.topic, req.consumerGroup, req.queueId), () => {
      if (req.offset < offsets.queryOffset(req.consumerGroup, req.topic, req.queueId)) return zero;
      const nextVisible = Date.now() + req.invisibleTime;
      core.orderInfo.updateNextVisibleTime(req.topic, req.consumerGroup, req.queueId, req.offset, oldPopTime, nextVisible);
      const invisibleTime = nextVisible - oldPopTime;
      return { popTime: oldPopTime, invisibleTime, reviveQid, receiptHandle: handleFor(oldPopTime, invisibleTime) };
    });
  }

  const now = Date.now();
  const ck: CheckPoint = {
    startOffset: req.offset, popTime: now, invisibleTime: req.invisibleTime, bitMap: 0, num: 1, queueId: req.queueId,
    topic: req.topic, group: req.consumerGroup, reviveOffset: 0, queueOffsetDiff: [0], brokerName,
  };
  if (!(await core.putReviveRecord(checkPointMessage(ck, place(core, reviveQid)), { group: ck.group, topic: ck.topic, type: 'CK' }))) {
    return refusal(ResponseCode.SYSTEM_ERROR, '');
  }
  const ackOrigin: AckRecord = {
    ackOffset: req.offset, startOffset: oldStart, group: req.consumerGroup, topic: req.topic, queueId: req.queueId,
    popTime: oldPopTime, brokerName,
  };
  await core.putReviveRecord(ackMessage(ackOrigin, oldInvisible, place(core, reviveQid)), { group: ackOrigin.group, topic: ackOrigin.topic, type: 'ACK' });
  return { popTime: now, invisibleTime: req.invisibleTime, reviveQid, receiptHandle: handleFor(now, req.invisibleTime) };
}

/**
 * The proxy's ForwardMessageToDeadLetterQueue, in the broker: the stored message to `%DLQ%<group>`
 * (CONSUMER_SEND_MSG_BACK with delayLevel −1), then acked. `topic` is the requested topic; the handle says whether
 * the message lives on its retry topic. A handle without a commit-log offset cannot be forwarded.
 */
export async function forwardToDeadLetter(
  core: PopCore, req: { consumerGroup: string; topic: string; handle: ReceiptHandle; peer: string },
): Promise<Refusal | undefined> {
  const { handle } = req;
  if (handle.commitLogOffset < 0) return refusal(ResponseCode.INVALID_PARAMETER, 'commit log offset is empty');
  const stored = realTopicOf(req.topic, req.consumerGroup, handle.retryFlag);
  if (stored === undefined) return refusal(ResponseCode.SYSTEM_ERROR, 'java.lang.IllegalArgumentException: getRetry fail, format is wrong');
  const sent = await sendMessageBack(core.ctx, {
    offset: handle.commitLogOffset, group: req.consumerGroup, delayLevel: -1, maxReconsumeTimes: 0, requestVersion: SERVER_VERSION,
    originTopic: req.topic,
  });
  if (sent) return sent;
  return ackPopped(core, {
    consumerGroup: req.consumerGroup, topic: stored, queueId: handle.queueId, offset: handle.queueOffset,
    extraInfo: encodeReceiptHandle(handle), peer: req.peer,
  });
}

function place(core: PopCore, reviveQid: number) {
  return { reviveTopic: core.reviveTopic, reviveQid, host: core.host(), nowMs: Date.now() };
}
