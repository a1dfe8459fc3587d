// RecallMessage (370) over raw remoting: the handle a timer send answers, the marker it parks, the message it
// cancels (and only that one), across restarts, and every refusal with Java's code and remark.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/common/logger.js';
import { RequestCode } from '../../src/common/request-code.js';
import { ResponseCode } from '../../src/common/response-code.js';
import type { BrokerConfig } from '../../src/common/config.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { createRequest } from '../../src/remoting/command.js';
import { decodeRecallHandle, encodeRecallHandle } from '../../src/broker/timer/recall-handle.js';
import { type TestServer, startTestServer, waitFor } from '../helpers/server.js';
import { TIMER_TOPIC, forgetSavedRecalls, pullAll, send } from './timer-helpers.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

async function start(overrides: Partial<BrokerConfig> = {}): Promise<{ server: TestServer; client: RemotingClient }> {
  const server = await startTestServer({ recallMessageEnable: true, timerPrecisionMs: 100, ...overrides });
  const client = new RemotingClient(silentLogger());
  closers.push(() => server.stop(), () => client.close());
  return { server, client };
}

function recall(client: RemotingClient, addr: string, topic: string, recallHandle: string) {
  return client.request(addr, createRequest(RequestCode.RECALL_MESSAGE, { producerGroup: 'PG_recall', topic, recallHandle, bname: 'broker-a' }), 10_000);
}

/** Sends timer messages k0..k{n-1} due at `dueMs`; returns their recall handles by key. */
async function sendTimers(client: RemotingClient, addr: string, topic: string, n: number, dueMs: number): Promise<Map<string, string>> {
  const handles = new Map<string, string>();
  for (let i = 0; i < n; i++) {
    const res = await send(client, addr, topic, { KEYS: `k${i}`, UNIQ_KEY: `UNIQ-${topic}-${i}`, TIMER_DELIVER_MS: String(dueMs) });
    expect(res.code).toBe(ResponseCode.SUCCESS);
    expect(res.extFields.recallHandle).toBeTruthy();
    handles.set(`k${i}`, res.extFields.recallHandle!);
  }
  return handles;
}

describe('RecallMessage', () => {
  it('answers a handle for parked timer messages only, in Java\'s format', async () => {
    const { server, client } = await start({ brokerName: 'broker-r' });
    const addr = server.brokerAddr;
    const plain = await send(client, addr, 'RecallFormat', { KEYS: 'p', UNIQ_KEY: 'UNIQ-P' });
    expect(plain.code).toBe(0);
    expect(plain.extFields.recallHandle).toBeUndefined();
    expect(plain.extFields.transactionId).toBe('UNIQ-P'); // as 5.3.3 answers every single send
    const due = await send(client, addr, 'RecallFormat', { TIMER_DELIVER_MS: String(Date.now() - 1000) });
    expect(due.extFields.recallHandle).toBeUndefined();
    const level = await send(client, addr, 'RecallFormat', { DELAY: '2', TIMER_DELAY_SEC: '30' });
    expect(level.extFields.recallHandle).toBeUndefined();

    const deliverMs = Date.now() + 60_000;
    const res = await send(client, addr, 'RecallFormat', { UNIQ_KEY: 'UNIQ-F', TIMER_DELIVER_MS: String(deliverMs) });
    const parked = (await pullAll(client, addr, TIMER_TOPIC)).find((m) => m.props.get('UNIQ_KEY') === 'UNIQ-F')!;
    const outMs = Number(parked.props.get('TIMER_OUT_MS'));
    // Java: Base64 URL encoding (with padding) of "v1 topic brokerName (TIMER_OUT_MS + 1) uniqKey".
    const text = `v1 RecallFormat broker-r ${outMs + 1} UNIQ-F`;
    expect(res.extFields.recallHandle).toBe(Buffer.from(text).toString('base64').replace(/\+/g, '-').replace(/\//g, '_'));
    expect(decodeRecallHandle(res.extFields.recallHandle!)).toEqual({ topic: 'RecallFormat', brokerName: 'broker-r', timestampStr: String(outMs + 1), uniqKey: 'UNIQ-F' });
  });

  it('cancels the recalled message and delivers the others of its slot', async () => {
    const { server, client } = await start();
    const addr = server.brokerAddr;
    const dueMs = Date.now() + 2500;
    const handles = await sendTimers(client, addr, 'RecallOne', 5, dueMs);
    const res = await recall(client, addr, 'RecallOne', handles.get('k2')!);
    expect(res.code).toBe(ResponseCode.SUCCESS);
    expect(res.extFields.msgId).toBe('UNIQ-RecallOne-2');
    // The marker: a timer-topic message due in the same slot, with Java's properties.
    const marker = (await pullAll(client, addr, TIMER_TOPIC)).find((m) => m.props.has('TIMER_DEL_UNIQKEY'))!;
    expect(marker.props.get('TIMER_DEL_UNIQKEY')).toBe('RecallOne+UNIQ-RecallOne-2');
    expect(marker.props.get('TAGS')).toBe('_RECALL_TAG_');
    expect(marker.props.get('REAL_TOPIC')).toBe('RecallOne');
    expect(marker.record.body.toString()).toBe('0');
    const timer = () => server.broker.context.timerMessageService!.status();
    expect(timer().pendingRecalls).toBe(1);

    // the marker and the four others of the slot are done in any order (a fresh-machine CI run pulled none of the
    // four right after the marker was)
    await waitFor(async () => timer().markersDone === 1 && timer().recalled === 1 && timer().delivered === 4, 15_000, 'the slot to be delivered');
    let got: Awaited<ReturnType<typeof pullAll>> = [];
    await waitFor(async () => (got = await pullAll(client, addr, 'RecallOne', 0)).length >= 4, 10_000, 'the four to be pullable');
    expect(got.map((m) => m.props.get('KEYS')).sort()).toEqual(['k0', 'k1', 'k3', 'k4']);
    for (const m of got) expect(m.record.storeTimestamp).toBeGreaterThanOrEqual(dueMs);
    expect(timer().delivered).toBe(4);
  });

  it('keeps a recall across restarts, also when the saved keys are gone (markers read again)', async () => {
    const { server, client } = await start();
    const addr = server.brokerAddr;
    const dueMs = Date.now() + 6000;
    const handles = await sendTimers(client, addr, 'RecallRestart', 3, dueMs);
    expect((await recall(client, addr, 'RecallRestart', handles.get('k0')!)).code).toBe(ResponseCode.SUCCESS);
    // A clean restart: the keys are in the progress file.
    await server.restartBroker(() => {
      const saved = JSON.parse(fs.readFileSync(path.join(server.storeDir, 'config', 'timerProgress.json'), 'utf8'));
      expect(saved.recalls).toEqual([['RecallRestart+UNIQ-RecallRestart-0', expect.any(Number)]]);
    });
    expect(server.broker.context.timerMessageService!.status().pendingRecalls).toBe(1);
    expect((await recall(client, addr, 'RecallRestart', handles.get('k1')!)).code).toBe(ResponseCode.SUCCESS);
    // As after a crash before the save (or a file of an older build): the markers are found in the timer queue.
    await server.restartBroker(() => forgetSavedRecalls(server.storeDir));
    const timer = () => server.broker.context.timerMessageService!.status();
    // read in the background; nothing is delivered before
    await waitFor(async () => timer().pendingRecalls === 2, 10_000, 'the markers to be read again');
    await waitFor(async () => timer().markersDone === 2 && timer().delivered === 1, 20_000, 'the slot to be delivered');
    let got: Awaited<ReturnType<typeof pullAll>> = [];
    await waitFor(async () => (got = await pullAll(client, addr, 'RecallRestart', 0)).length >= 1, 10_000, 'the one left to be pullable');
    expect(got.map((m) => m.props.get('KEYS'))).toEqual(['k2']);
    expect(timer().recalled).toBe(2);
  });

  it('refuses with Java\'s codes and remarks', async () => {
    const { server, client } = await start();
    const addr = server.brokerAddr;
    const handles = await sendTimers(client, addr, 'RecallBad', 1, Date.now() + 60_000);
    const good = decodeRecallHandle(handles.get('k0')!);
    if (typeof good === 'string') throw new Error(good);
    const cases: Array<[string, string, number, string]> = [
      ['RecallBad', 'not base64 !', ResponseCode.ILLEGAL_OPERATION, 'recall handle is invalid'],
      ['RecallBad', encodeRecallHandle({ ...good, topic: 'Other' }), ResponseCode.ILLEGAL_OPERATION, 'recall failed, topic not match'],
      ['RecallBad', encodeRecallHandle({ ...good, brokerName: 'broker-z' }), ResponseCode.ILLEGAL_OPERATION, 'recall failed, broker service not available'],
      ['RecallBad', encodeRecallHandle({ ...good, timestampStr: String(Date.now() - 1) }), ResponseCode.ILLEGAL_OPERATION, 'recall failed, timestamp invalid'],
      ['RecallBad', encodeRecallHandle({ ...good, timestampStr: 'soon' }), ResponseCode.ILLEGAL_OPERATION, 'recall failed, timestamp invalid'],
      ['RecallBad', encodeRecallHandle({ ...good, timestampStr: String(Date.now() + 4 * 86_400_000) }), ResponseCode.ILLEGAL_OPERATION, 'recall failed, timestamp invalid'],
      ['NoSuchTopicR', handles.get('k0')!, ResponseCode.TOPIC_NOT_EXIST, 'recall failed, the topic[NoSuchTopicR] not exist'],
    ];
    for (const [topic, handle, code, remark] of cases) {
      const res = await recall(client, addr, topic, handle);
      expect({ handle, code: res.code, remark: res.remark }).toEqual({ handle, code, remark });
    }
    const missing = await client.request(addr, createRequest(RequestCode.RECALL_MESSAGE, { topic: 'RecallBad' }), 10_000);
    expect([missing.code, missing.remark]).toEqual([ResponseCode.ILLEGAL_OPERATION, 'recall handle is invalid']); // as 5.3.3
    expect(server.broker.context.timerMessageService!.status().pendingRecalls).toBe(0);

    server.broker.context.config.recallMessageEnable = false;
    const off = await recall(client, addr, 'RecallBad', handles.get('k0')!);
    expect([off.code, off.remark]).toEqual([ResponseCode.NO_PERMISSION, 'recall failed, operation is forbidden']);
  });
});
