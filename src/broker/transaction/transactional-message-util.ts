// Transactional-message helpers shared by the send path, END_TRANSACTION and the check-back service.
// Java: broker/transaction/queue/TransactionalMessageUtil.java, TransactionalMessageBridge.java,
// processor/EndTransactionProcessor.java (endMessageTransaction).
import { javaStringHashCode } from '../../common/java-hash.js';
import { MessageConst, encodeProperties, getProperty, parseProperties } from '../../common/message-properties.js';
import { SysFlag, type DecodedRecord, type MessageToStore } from '../../store/index.js';
import { SystemTopic } from '../topic/topic-config.js';
import { messageFromRecord } from '../stored-message.js';

export const HALF_TOPIC = SystemTopic.TRANS_HALF;
export const OP_TOPIC = SystemTopic.TRANS_OP_HALF;
export const CHECK_MAX_TIME_TOPIC = SystemTopic.TRANS_CHECK_MAX_TIME;
/** MixAll.CID_SYS_RMQ_TRANS: the consumer group whose offsets hold the check progress of half and op queues. */
export const SYS_TRANS_GROUP = 'CID_RMQ_SYS_TRANS';
/** TransactionalMessageUtil.REMOVE_TAG: the tag of every op message. */
export const REMOVE_TAG = 'd';
/** 5.x op bodies are `"<halfOffset>,"` repeated; 4.9.x wrote a bare `"<halfOffset>"`. */
export const OFFSET_SEPARATOR = ',';

/** END_TRANSACTION commitOrRollback values (MessageSysFlag transaction types). */
export const TransactionType = Object.freeze({
  NOT: SysFlag.TRANSACTION_NOT_TYPE,
  PREPARED: SysFlag.TRANSACTION_PREPARED_TYPE,
  COMMIT: SysFlag.TRANSACTION_COMMIT_TYPE,
  ROLLBACK: SysFlag.TRANSACTION_ROLLBACK_TYPE,
});

/** MessageSysFlag.resetTransactionValue. */
export function resetTransactionValue(sysFlag: number, type: number): number {
  return (sysFlag & ~SysFlag.TRANSACTION_TYPE_MASK) | type;
}

/** Java Boolean.parseBoolean. */
function parseJavaBoolean(v: string | undefined): boolean {
  return v !== undefined && v.toLowerCase() === 'true';
}

/**
 * Whether a sent message is a transaction half message. Java (SendMessageProcessor) decides by the `TRAN_MSG`
 * property, not by the sysFlag, and excludes a retry with a delay level (clients before 4.6.1 kept TRAN_MSG on
 * messages they sent back).
 */
export function isHalfMessageSend(propertiesString: string, reconsumeTimes: number): boolean {
  if (!parseJavaBoolean(getProperty(propertiesString, MessageConst.TRANSACTION_PREPARED))) return false;
  const delay = Number.parseInt(getProperty(propertiesString, MessageConst.DELAY_TIME_LEVEL) ?? '0', 10);
  return !(reconsumeTimes > 0 && delay > 0);
}

/**
 * TransactionalMessageBridge.parseHalfMessageInner: remember the real topic/queue, reset the transaction type to
 * NOT (so the record gets a consume-queue entry on the half topic) and park it on the half topic, queue 0.
 * Changes `msg` in place.
 */
export function toHalfMessage(msg: MessageToStore): MessageToStore {
  const props = parseProperties(msg.propertiesString);
  const uniqKey = props.get(MessageConst.UNIQ_CLIENT_MESSAGE_ID_KEYIDX);
  if (uniqKey) props.set(MessageConst.TRANSACTION_ID, uniqKey); // 5.x only; harmless for 4.9.x clients
  props.set(MessageConst.REAL_TOPIC, msg.topic);
  props.set(MessageConst.REAL_QUEUE_ID, String(msg.queueId));
  msg.propertiesString = encodeProperties(props);
  msg.sysFlag = resetTransactionValue(msg.sysFlag, TransactionType.NOT);
  msg.topic = HALF_TOPIC;
  msg.queueId = 0;
  return msg;
}

export function tagsCodeOf(props: Map<string, string>): number {
  const tags = props.get(MessageConst.TAGS);
  return tags ? javaStringHashCode(tags) : 0;
}

/**
 * EndTransactionProcessor.endMessageTransaction + the COMMIT reset. Java copies the half message's property
 * *string* and then clears REAL_TOPIC, REAL_QID and TRAN_MSG only from the property *map*, which the store does not
 * encode: the stored committed message keeps them (consumers see TRAN_MSG=true and REAL_*). Only the delay hook
 * rebuilds the string from the map, so a delayed commit loses TRAN_MSG and gets the schedule REAL_* instead.
 */
export function finalMessageFromHalf(half: DecodedRecord): MessageToStore | string {
  const props = parseProperties(half.propertiesString);
  const realTopic = props.get(MessageConst.REAL_TOPIC);
  const realQid = Number(props.get(MessageConst.REAL_QUEUE_ID));
  if (!realTopic || !Number.isInteger(realQid) || realQid < 0) {
    return `the half message at ${half.commitLogOffset} has no valid REAL_TOPIC/REAL_QID`;
  }
  let propertiesString = half.propertiesString;
  const delay = Number.parseInt(props.get(MessageConst.DELAY_TIME_LEVEL) ?? '0', 10);
  if (delay > 0) {
    props.delete(MessageConst.REAL_TOPIC);
    props.delete(MessageConst.REAL_QUEUE_ID);
    props.delete(MessageConst.TRANSACTION_PREPARED);
    propertiesString = encodeProperties(props);
  }
  return messageFromRecord(half, realTopic, realQid, props, {
    propertiesString,
    sysFlag: resetTransactionValue(half.sysFlag, TransactionType.COMMIT),
    preparedTransactionOffset: half.commitLogOffset,
  });
}

/**
 * A half message re-appended to its own queue (TransactionalMessageBridge.renewHalfMessageInner), used for each
 * check-back and for the CHECK_IMMUNITY_TIME_IN_SECONDS re-queue. Java does not copy FLAG or RECONSUMETIMES into
 * the copy (so a commit answered to a check loses the message flag); we copy them.
 */
export function renewHalfMessage(half: DecodedRecord, props: Map<string, string>): MessageToStore {
  return messageFromRecord(half, half.topic, half.queueId, props, { preparedTransactionOffset: 0 });
}

/** Op message body for one finished half offset (5.x layout). */
export function encodeOpBody(halfQueueOffset: number): Buffer {
  return Buffer.from(`${halfQueueOffset}${OFFSET_SEPARATOR}`, 'utf8');
}

/**
 * Half offsets named by an op body: accepts 5.x `"1,2,"` and 4.9.x `"1"`. Unparsable parts are dropped (Java
 * turns them into -1, which is below every queue offset and so ignored too).
 */
export function parseOpBody(body: Buffer): number[] {
  const out: number[] = [];
  for (const part of body.toString('utf8').split(OFFSET_SEPARATOR)) {
    const s = part.trim();
    if (!/^-?\d+$/.test(s)) continue;
    const n = Number(s);
    if (Number.isSafeInteger(n) && n >= 0) out.push(n);
  }
  return out;
}

/**
 * Identifies one transaction across its half message and every check-back copy of it: the copies keep the
 * producer group, UNIQ_KEY and born timestamp. The born time tells apart two transactions sent with the same
 * Message object (Java keeps a message's UNIQ_KEY when it is re-sent).
 */
export function transactionKey(half: DecodedRecord, props?: Map<string, string>): string {
  const pgroup = props ? props.get(MessageConst.PRODUCER_GROUP) : getProperty(half.propertiesString, MessageConst.PRODUCER_GROUP);
  const uniq = props
    ? props.get(MessageConst.UNIQ_CLIENT_MESSAGE_ID_KEYIDX)
    : getProperty(half.propertiesString, MessageConst.UNIQ_CLIENT_MESSAGE_ID_KEYIDX);
  // Without a UNIQ_KEY each record stands alone.
  if (!uniq) return `@${half.queueId}:${half.queueOffset}`;
  return `${pgroup ?? ''}\u0001${uniq}\u0001${half.bornTimestamp}`;
}

/** Java TransactionalMessageServiceImpl.getImmunityTime: seconds → ms; unparsable → transactionTimeOut. */
export function immunityTimeMs(checkImmunityTimeStr: string, transactionTimeOutMs: number): number {
  const s = checkImmunityTimeStr.trim();
  if (!/^-?\d+$/.test(s)) return transactionTimeOutMs;
  const n = Number(s);
  return n === -1 ? transactionTimeOutMs : n * 1000;
}
