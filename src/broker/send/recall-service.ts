// RecallMessage, apart from any transport (Java broker/processor/RecallMessageProcessor, 5.3.x): cancels a timer
// message that is not yet due by parking a delete marker for it — a timer message on the same topic, due in the
// same slot, carrying TIMER_DEL_UNIQKEY — which the timer service reads before it delivers that slot
// (timer/timer-recalls.ts). The remoting processor (RECALL_MESSAGE, 370) and the gRPC RecallMessage both call this.
import { javaStringHashCode } from '../../common/java-hash.js';
import { MessageConst, encodeProperties } from '../../common/message-properties.js';
import { ResponseCode } from '../../common/response-code.js';
import type { MessageToStore } from '../../store/index.js';
import type { BrokerContext } from '../context.js';
import { parseHostAddress } from '../message-id.js';
import { type Refusal, refusal } from '../outcome.js';
import { decodeRecallHandle } from '../timer/recall-handle.js';
import { recallDeleteKey } from '../timer/timer-recalls.js';
import { isWriteable } from '../topic/topic-config.js';

/** Java RecallMessageProcessor.RECALL_MESSAGE_TAG. */
export const RECALL_MESSAGE_TAG = '_RECALL_TAG_';

export interface RecallRequest {
  topic: string;
  recallHandle: string;
  producerGroup?: string;
  /** `ip:port` of the producer (BORNHOST of the marker). */
  peer: string;
}

/** The recalled message's UNIQ_KEY (Java answers the marker's, which is the same). */
export interface Recalled {
  msgId: string;
}

const NOT_AVAILABLE = 'recall failed, broker service not available';

/** Java's checks in Java's order, then the marker's put. */
export async function recallMessage(ctx: BrokerContext, req: RecallRequest): Promise<Recalled | Refusal> {
  const { config } = ctx;
  if (!config.recallMessageEnable) return refusal(ResponseCode.NO_PERMISSION, 'recall failed, operation is forbidden');
  if (config.brokerRole === 'SLAVE') return refusal(ResponseCode.SLAVE_NOT_AVAILABLE, NOT_AVAILABLE);
  if (!isWriteable(config.brokerPermission) && !config.allowRecallWhenBrokerNotWriteable) {
    return refusal(ResponseCode.SERVICE_NOT_AVAILABLE, NOT_AVAILABLE);
  }
  if (!ctx.topicConfigManager.get(req.topic)) {
    return refusal(ResponseCode.TOPIC_NOT_EXIST, `recall failed, the topic[${req.topic}] not exist`);
  }
  const handle = decodeRecallHandle(req.recallHandle);
  if (typeof handle === 'string') return refusal(ResponseCode.ILLEGAL_OPERATION, handle);
  if (handle.topic !== req.topic) return refusal(ResponseCode.ILLEGAL_OPERATION, 'recall failed, topic not match');
  if (handle.brokerName !== config.brokerName) return refusal(ResponseCode.ILLEGAL_OPERATION, NOT_AVAILABLE);
  const timestampMs = /^[+-]?\d{1,19}$/.test(handle.timestampStr) ? Number(handle.timestampStr) : -1;
  const timeLeftMs = timestampMs - Date.now();
  if (timeLeftMs <= 0 || timeLeftMs >= config.timerMaxDelaySec * 1000) {
    return refusal(ResponseCode.ILLEGAL_OPERATION, 'recall failed, timestamp invalid');
  }
  const timer = ctx.timerMessageService;
  if (!timer || !config.timerWheelEnable) {
    return refusal(ResponseCode.SYSTEM_ERROR, `recall failed, timer messages are not enabled, timerWheelEnable is ${config.timerWheelEnable}`);
  }
  if (!timer.canTakeRecall()) {
    return refusal(ResponseCode.SYSTEM_BUSY, `recall failed, ${timer.recalls.size} recalls are pending; try again after some of them are due`);
  }

  const msg = markerMessage(ctx, req, handle.topic, handle.uniqKey, handle.timestampStr);
  const refused = timer.applyTimer(msg);
  if (refused) return refusal(refused.code, refused.remark);
  const result = await ctx.store.putMessage(msg);
  switch (result.status) {
    case 'PUT_OK':
      ctx.stats.items.countPut(config.brokerClusterName, msg.topic, result.messageCount, result.wroteBytes);
      return { msgId: handle.uniqKey };
    case 'FLUSH_DISK_TIMEOUT':
    case 'FLUSH_SLAVE_TIMEOUT':
    case 'SLAVE_NOT_AVAILABLE':
      return { msgId: handle.uniqKey };
    default:
      return refusal(ResponseCode.SYSTEM_ERROR, `recall failed, execute error (${result.status})`);
  }
}

/** Java RecallMessageProcessor.buildMessage: body "0", tag _RECALL_TAG_, queue 0, due at the handle's time. */
function markerMessage(ctx: BrokerContext, req: RecallRequest, topic: string, uniqKey: string, deliverMs: string): MessageToStore {
  const now = Date.now();
  const props: Record<string, string> = {
    [MessageConst.TAGS]: RECALL_MESSAGE_TAG,
    [MessageConst.TIMER_DEL_UNIQKEY]: recallDeleteKey(topic, uniqKey),
    [MessageConst.UNIQ_CLIENT_MESSAGE_ID_KEYIDX]: uniqKey,
    [MessageConst.TIMER_DELIVER_MS]: deliverMs,
    BORN_TIMESTAMP: String(now),
  };
  if (req.producerGroup) props[MessageConst.PRODUCER_GROUP] = req.producerGroup;
  return {
    topic,
    queueId: 0,
    flag: 0,
    body: Buffer.from('0'),
    propertiesString: encodeProperties(props),
    tagsCode: javaStringHashCode(RECALL_MESSAGE_TAG),
    keys: undefined,
    uniqKey,
    sysFlag: 0,
    bornTimestamp: now,
    bornHost: parseHostAddress(req.peer),
    storeHost: parseHostAddress(ctx.brokerAddr()),
    reconsumeTimes: 0,
    preparedTransactionOffset: 0,
  };
}
