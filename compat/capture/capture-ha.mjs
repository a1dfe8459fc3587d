#!/usr/bin/env node
// Captures the classic HA port's bytes between an official master and an official slave of the same version,
// through a TCP proxy in front of the master's HA port (the slave's haMasterAddress points at it):
//
//   node compat/capture/capture-ha.mjs --version=4.9.8 [--slave=official|ours] [--out=FILE]
//
// --slave=ours puts our slave behind the proxy instead (the master's frames are still the official broker's). An
// official 5.3.3 slave cannot be pointed at a proxy: it never links when haMasterAddress is set (the address
// reaches DefaultHAService before its HA client exists: BrokerController.initialize runs before
// DefaultMessageStore.start creates it), so 5.3.3 is captured with --slave=ours.
//
// The master gets 3 messages before the slave starts (so the slave asks for the log from 0) and 2 more after it
// caught up; the capture runs until both sides sent heartbeats (> haSendHeartbeatInterval of silence). The file
// holds both byte streams as hex, with the time (ms since the link opened) of each chunk as TCP delivered it.
// test/ha/captured.test.ts reads them back with our readers. Run `npm run build` first.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { OfficialServer, OursServer, children, killTree, pickPorts, stopAllServers, usedPorts } from '../lib/servers.mjs';
import { Message, Remote, producer, sleep, waitFor } from '../lib/ha-tools.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')));
const version = args.version ?? '5.3.3';
const slaveKind = args.slave ?? 'official';
const out = args.out ?? path.join(ROOT, 'protocol', 'ha', slaveKind === 'ours' ? `official-${version}-master.json` : `official-${version}.json`);
const say = (m) => console.log(`[capture-ha ${new Date().toISOString().slice(11, 19)}] ${m}`);

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rmq-capture-ha-'));
  const master = new OfficialServer(version, tmp, tmp, { name: 'master' });
  master.ports = await pickPorts();
  const ns = `127.0.0.1:${master.ports.ns}`;
  const proxyPorts = await pickPorts(usedPorts(master.ports));
  const proxyPort = proxyPorts.broker;
  const slave = slaveKind === 'ours'
    ? new OursServer(tmp, tmp, {
      name: 'slave', namesrvAddr: ns,
      extraArgs: ['--brokerId=1', '--brokerRole=SLAVE', `--haMasterAddress=127.0.0.1:${proxyPort}`, '--mappedFileSizeCommitLog=67108864'],
    })
    : new OfficialServer(version, tmp, tmp, {
      name: 'slave', namesrvAddr: ns, extra: `brokerId=1\nbrokerRole=SLAVE\nhaMasterAddress=127.0.0.1:${proxyPort}`,
    });
  slave.ports = await pickPorts([...usedPorts(master.ports), ...usedPorts(proxyPorts)]);
  const chunks = [];
  let openedAt = 0;
  const proxy = net.createServer((client) => {
    const upstream = net.connect({ host: '127.0.0.1', port: master.ports.broker + 1 });
    openedAt ||= Date.now();
    const record = (dir) => (b) => chunks.push({ dir, ms: Date.now() - openedAt, hex: b.toString('hex') });
    client.on('data', (b) => {
      record('slave→master')(b);
      upstream.write(b);
    });
    upstream.on('data', (b) => {
      record('master→slave')(b);
      client.write(b);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end);
    upstream.on('close', end);
    client.on('error', end);
    upstream.on('error', end);
  });
  await new Promise((r) => proxy.listen(proxyPort, '127.0.0.1', r));
  const remote = new Remote();
  try {
    await master.prepare();
    await master.start();
    const m = `127.0.0.1:${master.ports.broker}`;
    await remote.createTopic(m, 'HaCaptureTopic', 1);
    await waitFor(async () => (await remote.route(ns, 'HaCaptureTopic')) !== null, 60_000, 'the route');
    const p = producer(ns, 'PG_capture_ha');
    await p.ready();
    for (let i = 0; i < 3; i++) await p.send(new Message('HaCaptureTopic', 'T', Buffer.from(`before the slave ${i}`)));
    say('master up, 3 messages; starting the slave');
    await slave.start();
    const s = `127.0.0.1:${slave.ports.broker}`;
    await waitFor(async () => (await remote.maxPhyOffset(s)) === (await remote.maxPhyOffset(m)), 90_000, 'the slave to catch up');
    for (let i = 0; i < 2; i++) await p.send(new Message('HaCaptureTopic', 'T', Buffer.from(`after the slave ${i}`)));
    await p.close();
    await waitFor(async () => (await remote.maxPhyOffset(s)) === (await remote.maxPhyOffset(m)), 90_000, 'the slave to catch up again');
    const end = await remote.maxPhyOffset(m);
    say(`caught up at ${end}; waiting for heartbeats both ways`);
    await sleep(12_000);
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.writeFileSync(out, `${JSON.stringify({
      capturedWith: `compat/capture/capture-ha.mjs --version=${version}`,
      capturedAt: new Date().toISOString(),
      master: `official ${version} (ASYNC_MASTER, mappedFileSizeCommitLog 67108864)`,
      slave: slaveKind === 'ours' ? 'rocketmq-ts (SLAVE, brokerId 1, empty store)' : `official ${version} (SLAVE, brokerId 1, empty store)`,
      masterLogEnd: end,
      chunks,
    }, null, 1)}\n`);
    say(`wrote ${path.relative(ROOT, out)} (${chunks.length} chunks)`);
  } finally {
    await remote.close();
    await slave.stop().catch(() => undefined);
    await master.stop().catch(() => undefined);
    proxy.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().then(() => process.exit(0), async (e) => {
  console.error(`capture-ha: ${e.stack ?? e}`);
  await stopAllServers();
  for (const ch of children) killTree(ch, 'SIGKILL');
  process.exit(1);
});
