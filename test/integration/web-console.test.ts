import fs from 'node:fs';
import path from 'node:path';
import { Message } from 'ali-ons';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onsConsumer, onsProducer } from '../helpers/ali-ons.js';
import { runScript, tail } from '../helpers/compat.js';
import { type TestServer, createTopic, startTestServer, tempDir } from '../helpers/server.js';

/**
 * The admin web page (adminWebPort) in Debian's headless chromium (scripts/install-chromium.sh) driven by
 * playwright-core: it loads, shows the cluster, topics, groups with lag and clients, finds messages by key, draws
 * the rate chart; its numbers equal what the stock mqadmin 4.9.8 prints; screenshots are taken and checked.
 */
const CHROMIUM = '/usr/bin/chromium';
const HAVE_CHROMIUM = fs.existsSync(CHROMIUM);
if (!HAVE_CHROMIUM) console.warn(`web-console.test.ts skipped: ${CHROMIUM} is missing (run scripts/install-chromium.sh as root)`);
// The flags the machine notes list: no sandbox as root, no GPU, no background connections on a closed network.
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const TOPIC = 'WebTopic';
const GROUP = 'WebGroup';
const SENT = 40;
const LATER = 10;
const IDLE_TOPIC = 'WebIdleTopic';
let msgId3 = '';

/** PNG width and height from the IHDR chunk. */
function pngSize(file: string): { width: number; height: number } {
  const b = fs.readFileSync(file);
  expect(b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(true);
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

describe.skipIf(!HAVE_CHROMIUM)('admin web page in headless chromium', () => {
  let server: TestServer;
  let browser: Browser;
  let url: string;
  let shots: string;
  let idle: ReturnType<typeof onsConsumer> | undefined;

  beforeAll(async () => {
    shots = process.env.RMQ_SCREENSHOT_DIR ?? tempDir('web-shots');
    server = await startTestServer({ adminWebPort: 0 });
    url = `http://127.0.0.1:${server.broker.webConsolePort()}/`;
    await createTopic(server, TOPIC, 4);
    await createTopic(server, IDLE_TOPIC, 1);
    const producer = onsProducer(server.namesrvAddr, 'WebProducer');
    await producer.ready();
    const send = async (i: number) => {
      const m = new Message(TOPIC, 'T', `web message ${i}`);
      m.keys = [`web-key-${i}`];
      const res = await producer.send(m);
      if (i === 3) msgId3 = res.msgId;
    };
    for (let i = 0; i < SENT; i++) await send(i);
    // a consumer takes all and commits (closing commits)
    const consumer = onsConsumer(server.namesrvAddr, GROUP);
    let got = 0;
    const half = new Promise<void>((resolve) => {
      consumer.subscribe(TOPIC, '*', async () => {
        if (++got === SENT) resolve();
      });
    });
    await consumer.ready();
    await half;
    await consumer.close();
    // then LATER more messages arrive: the group's lag on the page and in mqadmin
    for (let i = SENT; i < SENT + LATER; i++) await send(i);
    await producer.close();
    // an idle consumer of another group stays connected: the page lists it as a client
    idle = onsConsumer(server.namesrvAddr, 'WebIdleGroup');
    idle.subscribe(IDLE_TOPIC, '*', async () => undefined);
    await idle.ready();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await idle?.close();
    await server?.stop();
  });

  it('loads, and its numbers match mqadmin topicStatus and consumerProgress', { timeout: 180_000 }, async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    await page.goto(url);
    await page.waitForSelector('body[data-loaded="true"]');
    await page.waitForSelector(`#topics tr[data-topic="${TOPIC}"]`);
    const shot = path.join(shots, 'web-console.png');
    await page.screenshot({ path: shot, fullPage: true });
    const size = pngSize(shot);
    expect(size.width).toBe(1280);
    expect(size.height).toBeGreaterThan(600);
    expect(fs.statSync(shot).size).toBeGreaterThan(20_000); // tables and text, not a blank page

    // cluster: this broker as the nameserver lists it
    expect(await page.textContent('#cluster tr[data-broker="broker-a"]')).toContain(server.brokerAddr);
    expect(await page.textContent('#cluster tr[data-broker="broker-a"]')).toContain('MASTER');

    // topics: per-queue max offsets equal mqadmin topicStatus
    const status = await runScript('compat/mqadmin/run.sh', ['topicStatus', '-t', TOPIC, '-n', server.namesrvAddr], 90_000);
    const maxByQueue = new Map<number, number>();
    for (const line of status.output.split('\n')) {
      const c = line.trim().split(/\s+/); // #Broker Name  #QID  #Min Offset  #Max Offset  #Last Updated
      if (c[0] === 'broker-a' && /^\d+$/.test(c[1])) maxByQueue.set(Number(c[1]), Number(c[3]));
    }
    expect(maxByQueue.size, tail(status.output)).toBe(4);
    let total = 0;
    for (const [q, max] of maxByQueue) {
      expect(Number(await page.textContent(`#topics tr[data-topic="${TOPIC}"] [data-queue="${q}"]`))).toBe(max);
      total += max;
    }
    expect(total).toBe(SENT + LATER);
    expect(Number(await page.textContent(`#topics tr[data-topic="${TOPIC}"] [data-field="messages"]`))).toBe(SENT + LATER);

    // groups: per-queue lag equals mqadmin consumerProgress's diff
    const progress = await runScript('compat/mqadmin/run.sh', ['consumerProgress', '-g', GROUP, '-n', server.namesrvAddr], 90_000);
    let diffTotal = 0;
    let rowsSeen = 0;
    for (const line of progress.output.split('\n')) {
      const c = line.trim().split(/\s+/); // #Topic #Broker Name #QID #Broker Offset #Consumer Offset #Client IP #Diff #LastTime
      if (c[0] !== TOPIC) continue;
      rowsSeen++;
      const qid = c[2];
      // with a connected client the row has #Client IP before #Diff; our group has none (LastTime is 2 columns)
      const diff = Number(c.length >= 9 ? c[6] : c[5]);
      diffTotal += diff;
      await page.reload();
      await page.waitForSelector('body[data-loaded="true"]');
      const cell = await page.textContent(`#groups tr[data-queue="${TOPIC}/${qid}"] [data-field="lag"]`);
      expect(Number(cell)).toBe(diff);
    }
    expect(rowsSeen, tail(progress.output)).toBe(4);
    expect(diffTotal).toBeGreaterThanOrEqual(LATER); // ali-ons may commit one behind on close; the page must equal mqadmin
    expect(Number(await page.textContent(`#groups tr[data-group="${GROUP}"] > [data-field="lag"]`))).toBe(diffTotal);
    // the idle consumer's client id, as mqadmin consumerConnection lists it
    const conn = await runScript('compat/mqadmin/run.sh', ['consumerConnection', '-g', 'WebIdleGroup', '-n', server.namesrvAddr], 90_000);
    const clientId = conn.output.split('\n').map((l) => l.trim().split(/\s+/)).find((c) => c.length === 4 && c[0].includes('@') && c[0] !== '#ClientId')?.[0]; // #ClientId #ClientAddr #Language #Version
    expect(clientId, tail(conn.output)).toBeTruthy();
    expect(await page.textContent('#groups tr[data-group="WebIdleGroup"]')).toContain(clientId!);
  });

  it('finds a message by key and draws the rate chart', { timeout: 60_000 }, async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    await page.goto(url);
    await page.waitForSelector('body[data-loaded="true"]');
    await page.fill('#lookup input[name="topic"]', TOPIC);
    await page.fill('#lookup input[name="key"]', 'web-key-7');
    await page.click('#lookup button');
    await page.waitForSelector('#messages tbody tr');
    const row = await page.textContent('#messages tbody tr');
    expect(row).toContain('web message 7');
    expect(row).toContain('web-key-7');
    // by the id the producer got back (ali-ons: the broker's offset msgId, as mqadmin queryMsgById takes it)
    await page.fill('#lookup input[name="key"]', '');
    await page.fill('#lookup input[name="id"]', msgId3);
    await page.click('#lookup button');
    await page.waitForFunction(() => document.querySelector('#messages tbody')?.textContent?.includes('web message 3'));
    expect(await page.textContent('#lookup-status')).toBe('1 message(s) found');
    expect(Number(await page.textContent('#put-total'))).toBeGreaterThanOrEqual(SENT);
    expect(Number(await page.textContent('#get-total'))).toBeGreaterThanOrEqual(SENT);
    expect((await page.getAttribute('#line-in', 'points'))?.split(' ').length).toBeGreaterThan(1);
    const shot = path.join(shots, 'web-console-lookup.png');
    await page.screenshot({ path: shot, fullPage: true });
    expect(pngSize(shot).width).toBe(1280);
  });
});
