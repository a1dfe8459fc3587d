// Raw SEND_MESSAGE / PULL_MESSAGE for the timer tests; pulled records are decoded with the store's decoder.
import fs from 'node:fs';
import path from 'node:path';
import { encodeProperties, parseProperties } from '../../src/common/message-properties.js';
import { RequestCode } from '../../src/common/request-code.js';
import { ResponseCode } from '../../src/common/response-code.js';
import type { RemotingClient } from '../../src/remoting/client.js';
import { type RemotingCommand, createRequest } from '../../src/remoting/command.js';
import { type DecodedRecord, decodeRecord } from '../../src/store/record.js';

export const TIMER_TOPIC = 'rmq_sys_wheel_timer';

/** SEND_MESSAGE_V2 (310), the header a Java client sends. */
export function send(
  client: RemotingClient, brokerAddr: string, topic: string, props: Record<string, string>, body = Buffer.from('x'), queueId = 0,
): Promise<RemotingCommand> {
  const req = createRequest(
    RequestCode.SEND_MESSAGE_V2,
    {
      a: 'PG_timer', b: topic, c: 'TBW102', d: '4', e: String(queueId), f: '0', g: String(Date.now()), h: '0',
      i: encodeProperties(props), j: '0', k: 'false', m: 'false',
    },
    body,
  );
  return client.request(brokerAddr, req, 10_000);
}

export interface Pulled {
  record: DecodedRecord;
  props: Map<string, string>;
}

/** PULL_MESSAGE (11) with an inline `*` subscription and no suspension; [] when nothing is there. */
export async function pull(client: RemotingClient, brokerAddr: string, topic: string, queueId: number, offset: number, max = 32): Promise<Pulled[]> {
  const req = createRequest(RequestCode.PULL_MESSAGE, {
    consumerGroup: 'GID_timer', topic, queueId: String(queueId), queueOffset: String(offset), maxMsgNums: String(max),
    sysFlag: '4', commitOffset: '0', suspendTimeoutMillis: '0', subscription: '*', subVersion: '0', expressionType: 'TAG',
  });
  const res = await client.request(brokerAddr, req, 10_000);
  if (res.code !== ResponseCode.SUCCESS || !res.body) return [];
  const out: Pulled[] = [];
  for (let pos = 0; pos < res.body.length;) {
    const record = decodeRecord(res.body, pos);
    out.push({ record, props: parseProperties(record.propertiesString) });
    pos += record.totalSize;
  }
  return out;
}

/** Everything in a queue from `offset` on. */
export async function pullAll(client: RemotingClient, brokerAddr: string, topic: string, queueId = 0, offset = 0): Promise<Pulled[]> {
  const all: Pulled[] = [];
  for (;;) {
    const batch = await pull(client, brokerAddr, topic, queueId, offset + all.length);
    if (batch.length === 0) return all;
    all.push(...batch);
  }
}

/**
 * Removes the saved recall keys from a stopped broker's timer progress file, as after a crash before the save or
 * with a file of a build before recalls: the markers must be read again from the timer queue.
 */
export function forgetSavedRecalls(storeDir: string): void {
  const file = path.join(storeDir, 'config', 'timerProgress.json');
  const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  delete saved.recalls;
  delete saved.recallsSeenBelow;
  fs.writeFileSync(file, JSON.stringify(saved));
}
