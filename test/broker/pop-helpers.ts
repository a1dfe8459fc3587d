// Raw POP_MESSAGE / ACK_MESSAGE / CHANGE_MESSAGE_INVISIBLETIME requests as a Java 5.x client sends them (JSON
// headers: the codes do not fit the binary header), and the answers decoded the way MQClientAPIImpl reads them.
import { parseProperties } from '../../src/common/message-properties.js';
import { RequestCode } from '../../src/common/request-code.js';
import type { RemotingClient } from '../../src/remoting/client.js';
import { type RemotingCommand, createRequest } from '../../src/remoting/command.js';
import { type DecodedRecord, decodeRecord } from '../../src/store/record.js';
import { parseMsgOffsetInfo, parseStartOffsetInfo, queueInfoKey, buildExtraInfo } from '../../src/broker/pop/extra-info.js';

export interface PoppedRecord {
  record: DecodedRecord;
  props: Map<string, string>;
  /** POP_CK as the Java client computes it (the record's own POP_CK for retry records). */
  extraInfo: string;
  /** The topic acks must name: the retry topic for retried messages. */
  realTopic: string;
}

export interface PopAnswer {
  res: RemotingCommand;
  messages: PoppedRecord[];
}

export function popRequest(fields: Record<string, string | number | boolean>): RemotingCommand {
  const ext: Record<string, string> = {};
  for (const [k, v] of Object.entries({
    queueId: -1, maxMsgNums: 32, invisibleTime: 60_000, pollTime: 0, bornTime: Date.now(), initMode: 0, order: false, ...fields,
  })) ext[k] = String(v);
  return createRequest(RequestCode.POP_MESSAGE, ext);
}

/** POP_MESSAGE; messages get POP_CK as MQClientAPIImpl.processPopResponse builds it. */
export async function pop(
  client: RemotingClient, brokerAddr: string, group: string, topic: string, fields: Record<string, string | number | boolean> = {},
  brokerName = 'broker-a',
): Promise<PopAnswer> {
  const res = await client.request(brokerAddr, popRequest({ consumerGroup: group, topic, ...fields }), 30_000);
  const messages: PoppedRecord[] = [];
  if (res.code !== 0 || !res.body) return { res, messages };
  const starts = parseStartOffsetInfo(res.extFields.startOffsetInfo);
  const offsets = parseMsgOffsetInfo(res.extFields.msgOffsetInfo);
  for (let pos = 0; pos < res.body.length;) {
    const record = decodeRecord(res.body, pos);
    pos += record.totalSize;
    const props = parseProperties(record.propertiesString);
    let extraInfo = props.get('POP_CK');
    if (!extraInfo) {
      const key = queueInfoKey(record.topic, record.queueId);
      const start = starts?.get(key);
      if (start === undefined || !offsets?.get(key)?.includes(record.queueOffset)) throw new Error(`no offset info for ${key}`);
      extraInfo = buildExtraInfo(start, Number(res.extFields.popTime), Number(res.extFields.invisibleTime), Number(res.extFields.reviveQid),
        record.topic, brokerName, record.queueId, record.queueOffset);
    }
    const flag = extraInfo.split(' ')[4];
    const realTopic = flag === '1' ? `%RETRY%${group}_${topic}` : flag === '2' ? `%RETRY%${group}+${topic}` : topic;
    messages.push({ record, props, extraInfo, realTopic });
  }
  return { res, messages };
}

export function ack(client: RemotingClient, brokerAddr: string, group: string, m: PoppedRecord): Promise<RemotingCommand> {
  const q = m.extraInfo.split(' ');
  return client.request(brokerAddr, createRequest(RequestCode.ACK_MESSAGE, {
    consumerGroup: group, topic: m.realTopic, queueId: q[6]!, offset: q[7]!, extraInfo: m.extraInfo,
  }), 10_000);
}

export function changeInvisible(client: RemotingClient, brokerAddr: string, group: string, m: PoppedRecord, invisibleTime: number): Promise<RemotingCommand> {
  const q = m.extraInfo.split(' ');
  return client.request(brokerAddr, createRequest(RequestCode.CHANGE_MESSAGE_INVISIBLETIME, {
    consumerGroup: group, topic: m.realTopic, queueId: q[6]!, offset: q[7]!, extraInfo: m.extraInfo, invisibleTime: String(invisibleTime),
  }), 10_000);
}

export const bodyOf = (m: PoppedRecord): string => m.record.body.toString();
