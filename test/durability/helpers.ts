// Raw SEND_MESSAGE / PULL_MESSAGE over our remoting client, with pulled bodies decoded by the stock ali-ons
// MessageDecoder (what a Node client would see).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { RequestCode } from '../../src/common/request-code.js';
import { createRequest, type RemotingCommand } from '../../src/remoting/command.js';
import type { RemotingClient } from '../../src/remoting/client.js';
import type { DefaultMessageStore } from '../../src/store/index.js';
import { waitFor } from '../helpers/server.js';

const require = createRequire(import.meta.url);
const aliOnsDir = require.resolve('ali-ons');
const requireFromAliOns = createRequire(aliOnsDir);

/** The fields of an ali-ons MessageExt the tests look at. */
export interface DecodedMessage {
  topic: string;
  queueId: number;
  queueOffset: number;
  commitLogOffset: number;
  body: Buffer;
  properties: Record<string, string>;
  msgId: string;
}

interface AliOnsByteBuffer {
  hasRemaining(): boolean;
  position(): number;
}
const MessageDecoder = requireFromAliOns('./message/message_decoder') as {
  /** null where the record does not decode (ali-ons swallows the error and moves to the end). */
  decode(buf: AliOnsByteBuffer, readBody: boolean, deCompressBody: boolean): Record<string, unknown> | null;
};
const ByteBuffer = requireFromAliOns('byte') as { wrap(b: Buffer): AliOnsByteBuffer };

/**
 * Decodes a pull body with ali-ons' own decoder, bodies as stored: a producer may set the compressed flag on a body
 * that is not zlib (the broker stores it as sent), and ali-ons' decodes() then drops that message and every one
 * after it without a word. A record that does not decode is an error here, never a shorter list.
 */
export function decodeWithAliOns(body: Buffer): DecodedMessage[] {
  const buf = ByteBuffer.wrap(body);
  const decoded: Array<Record<string, unknown>> = [];
  while (buf.hasRemaining()) {
    const at = buf.position();
    const m = MessageDecoder.decode(buf, true, false);
    if (!m) throw new Error(`pulled body of ${body.length} bytes: the record at byte ${at} does not decode (ali-ons MessageDecoder)`);
    decoded.push(m);
  }
  return decoded.map((m) => ({
    topic: m.topic as string,
    queueId: m.queueId as number,
    queueOffset: Number(m.queueOffset),
    commitLogOffset: Number(m.commitLogOffset),
    body: m.body as Buffer,
    properties: (m.properties ?? {}) as Record<string, string>,
    msgId: m.msgId as string,
  }));
}

export function propertiesString(props: Record<string, string>): string {
  let s = '';
  for (const [k, v] of Object.entries(props)) s += `${k}\u0001${v}\u0002`;
  return s;
}

/** SEND_MESSAGE (10) with a Java-client-style header. */
export function rawSend(
  client: RemotingClient, brokerAddr: string, topic: string, queueId: number, body: Buffer, props: Record<string, string> = {},
): Promise<RemotingCommand> {
  const req = createRequest(RequestCode.SEND_MESSAGE, {
    producerGroup: 'PG_durability',
    topic,
    defaultTopic: 'TBW102',
    defaultTopicQueueNums: '4',
    queueId: String(queueId),
    sysFlag: '0',
    bornTimestamp: String(Date.now()),
    flag: '0',
    properties: propertiesString(props),
    reconsumeTimes: '0',
    unitMode: 'false',
    batch: 'false',
  }, body);
  return client.request(brokerAddr, req, 10_000);
}

export interface PullAnswer {
  code: number;
  remark?: string;
  nextBeginOffset: number;
  minOffset: number;
  maxOffset: number;
  messages: DecodedMessage[];
}

/** PULL_MESSAGE (11) with an inline subscription (`*`), no suspension and no offset commit. */
export async function rawPull(
  client: RemotingClient, brokerAddr: string, topic: string, queueId: number, queueOffset: number, maxMsgNums = 32,
): Promise<PullAnswer> {
  const req = createRequest(RequestCode.PULL_MESSAGE, {
    consumerGroup: 'GID_durability',
    topic,
    queueId: String(queueId),
    queueOffset: String(queueOffset),
    maxMsgNums: String(maxMsgNums),
    sysFlag: String(4), // FLAG_SUBSCRIPTION
    commitOffset: '0',
    suspendTimeoutMillis: '0',
    subscription: '*',
    subVersion: '0',
    expressionType: 'TAG',
  });
  const res = await client.request(brokerAddr, req, 10_000);
  return {
    code: res.code,
    remark: res.remark,
    nextBeginOffset: Number(res.extFields.nextBeginOffset),
    minOffset: Number(res.extFields.minOffset),
    maxOffset: Number(res.extFields.maxOffset),
    messages: res.code === 0 && res.body ? decodeWithAliOns(res.body) : [],
  };
}

/** The files in a store's commit-log directory now. */
export function commitLogFilesOnDisk(storeDir: string): number {
  return fs.readdirSync(path.join(storeDir, 'commitlog')).length;
}

/**
 * The same count once every file of the log is on disk: the next file is preallocated asynchronously, so counted
 * right after a send it could appear after the count.
 */
export async function settledCommitLogFiles(storeDir: string, store: DefaultMessageStore): Promise<number> {
  await waitFor(() => commitLogFilesOnDisk(storeDir) === store.commitLog.files.length, 10_000, 'the preallocated commit-log file on disk');
  return commitLogFilesOnDisk(storeDir);
}
