// Timer progress handed over between an official 5.x broker (config/timercheck, Java TimerCheckpoint) and ours
// (config/timerProgress.json) when one opens a store the other wrote (compat/store-compat.mjs found both
// re-delivering timer messages the other had already delivered).
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type JavaTimerCheckpoint, encodeTimerCheckpoint, readTimerCheckpoint, timerCheckpointPath, timerDoneByJava,
} from '../../src/broker/timer/timer-checkpoint.js';
import { silentLogger } from '../../src/common/logger.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { startTestServer, tempDir, waitFor } from '../helpers/server.js';
import { TIMER_TOPIC, pullAll, send } from './timer-helpers.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

// config/timercheck of an official 5.3.3 broker that had taken two timer messages into its timerlog
// (lastTimerLogFlushPos 104 = two 52-byte units) and delivered the first (first 64 bytes of the 4 KiB file).
const JAVA_533_TIMERCHECK = Buffer.from(
  '000001a22bd0b988' + '0000000000000068' + '0000000000000002' + '0000000000000002' +
  '0000000000000000' + '000001a22bd0bc7a' + '0000000000000026' + '0000000000000000', 'hex');

describe('config/timercheck (Java TimerCheckpoint)', () => {
  it('reads the file an official 5.3.3 broker wrote and writes the same layout', () => {
    const dir = tempDir('timercheck');
    try {
      const file = timerCheckpointPath(dir);
      expect(file).toBe(path.join(dir, 'config', 'timercheck'));
      fs.mkdirSync(path.dirname(file), { recursive: true });
      const page = Buffer.alloc(4096);
      JAVA_533_TIMERCHECK.copy(page);
      fs.writeFileSync(file, page);
      const cp = readTimerCheckpoint(file)!;
      expect(cp).toEqual({
        lastReadTimeMs: 0x1a22bd0b988, lastTimerLogFlushPos: 104, lastTimerQueueOffset: 2, masterTimerQueueOffset: 2,
        stateVersion: 0, timestamp: 0x1a22bd0bc7a, counter: 38,
      });
      expect(encodeTimerCheckpoint(cp)).toEqual(page);
      expect(readTimerCheckpoint(path.join(dir, 'nope'))).toBeUndefined();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an entry is done when it was taken into the timerlog and its wheel slot was dequeued', () => {
    const R = 1_800_000_000_000;
    const cp: JavaTimerCheckpoint = {
      lastReadTimeMs: R, lastTimerLogFlushPos: 0, lastTimerQueueOffset: 10, masterTimerQueueOffset: 10,
      stateVersion: 0, timestamp: R, counter: 1,
    };
    const stored = R - 60_000;
    expect(timerDoneByJava(cp, 3, R - 1000, stored, 1000)).toBe(true);
    expect(timerDoneByJava(cp, 3, R - 1, stored, 1000)).toBe(true); // slot R - 1000
    expect(timerDoneByJava(cp, 3, R, stored, 1000)).toBe(false);
    expect(timerDoneByJava(cp, 3, R + 5000, stored, 1000)).toBe(false);
    expect(timerDoneByJava(cp, 10, R - 1000, stored, 1000)).toBe(false); // not taken in yet
    // Further than the 2-day roll window: parked in the slot of enqueue + window (re-parked from there) ...
    const day = 86_400_000;
    expect(timerDoneByJava(cp, 3, stored + 10 * day, R - 2 * day - 1000, 1000)).toBe(true);
    expect(timerDoneByJava(cp, 3, stored + 10 * day, R - 2 * day + 1000, 1000)).toBe(false);
    // ... or of enqueue + half the window when due less than a third of the window after that
    const early = R - day - 1000;
    const late = R - day + 1000;
    expect(timerDoneByJava(cp, 3, early + 2.5 * day, early, 1000)).toBe(true);
    expect(timerDoneByJava(cp, 3, late + 2.5 * day, late, 1000)).toBe(false);
    expect(timerDoneByJava(cp, 3, early + 3 * day, early, 1000)).toBe(false); // whole window: slot R + day - 1000
  });
});

describe('timer hand-over with an official broker', () => {
  it('writes timercheck for the official broker; takes over a newer one, drops its timerlog, delivers nothing twice', async () => {
    const dir = tempDir('timer-handover');
    const server = await startTestServer({ storePathRootDir: dir });
    const client = new RemotingClient(silentLogger());
    closers.push(async () => {
      await server.stop();
      await client.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    const now = Date.now();
    const aMs = now + 1500;
    const bMs = now + 6000;
    for (const [key, at] of [['a', aMs], ['b', bMs]] as const) {
      const res = await send(client, server.brokerAddr, 'Handover', { KEYS: key, UNIQ_KEY: `U-${key}`, TIMER_DELIVER_MS: String(at) });
      expect(res.code).toBe(0);
    }
    await waitFor(async () => (await pullAll(client, server.brokerAddr, 'Handover')).length === 1, 10_000, 'the first timer');
    await server.broker.shutdown();

    // Ours wrote Java's file next to its own: the official broker would start reading the timer queue at b.
    const cpFile = timerCheckpointPath(dir);
    const ours = readTimerCheckpoint(cpFile)!;
    expect(ours.lastTimerQueueOffset).toBe(1);
    expect(ours.masterTimerQueueOffset).toBe(1);
    expect(ours.lastTimerLogFlushPos).toBe(0);
    const progress = JSON.parse(fs.readFileSync(path.join(dir, 'config', 'timerProgress.json'), 'utf8'));
    expect(progress.queueOffset).toBe(1);
    expect(ours.timestamp).toBe(progress.updateTimestamp);

    // An official broker then ran on the store: it took both into its timerlog and dequeued past b's slot
    // (delivered b). Ours must not deliver b again, and must drop the official timerlog/timerwheel.
    const parked = await (async () => {
      await server.restartBroker(); // a clean restart with our own timercheck changes nothing
      const all = await pullAll(client, server.brokerAddr, TIMER_TOPIC);
      await server.broker.shutdown();
      return all;
    })();
    expect(parked).toHaveLength(2);
    const bOut = Number(parked[1]!.props.get('TIMER_OUT_MS'));
    fs.writeFileSync(cpFile, encodeTimerCheckpoint({
      lastReadTimeMs: bOut + 1000, lastTimerLogFlushPos: 104, lastTimerQueueOffset: 2, masterTimerQueueOffset: 2,
      stateVersion: 0, timestamp: Date.now() + 1000, counter: 50,
    }));
    fs.mkdirSync(path.join(dir, 'timerlog'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'timerlog', '00000000000000000000'), Buffer.alloc(1024));
    fs.writeFileSync(path.join(dir, 'timerwheel'), Buffer.alloc(1024));
    await server.restartBroker();
    expect(fs.existsSync(path.join(dir, 'timerlog'))).toBe(false);
    expect(fs.existsSync(path.join(dir, 'timerwheel'))).toBe(false);
    const svc = server.broker.context.timerMessageService!;
    expect(svc.status().pendingFrom).toBe(2);

    // A new timer still works, and neither a nor b shows up again.
    const cMs = Date.now() + 1000;
    expect((await send(client, server.brokerAddr, 'Handover', { KEYS: 'c', UNIQ_KEY: 'U-c', TIMER_DELIVER_MS: String(cMs) })).code).toBe(0);
    await waitFor(async () => (await pullAll(client, server.brokerAddr, 'Handover')).length >= 2, 10_000, 'the new timer');
    while (Date.now() < bMs + 2500) await new Promise((r) => setTimeout(r, 200));
    const keys = (await pullAll(client, server.brokerAddr, 'Handover')).map((p) => p.props.get('KEYS'));
    expect(keys).toEqual(['a', 'c']);
    const after = readTimerCheckpoint(cpFile)!;
    expect(after.lastTimerQueueOffset).toBe(3);
    expect(after.counter).toBeGreaterThan(50);
  }, 30_000);
});
