#!/usr/bin/env node
// Master/slave fault tests (issue #13 tests 2-5) on real processes, ours and the official broker side by side,
// each fault at a seeded moment (the seed in every line replays the run):
//   consumer-failover   a consumer group reads a backlog; kill -9 of the master at a seeded point; every message is
//                       consumed (from the slave); the master comes back, consumption goes on there and the group's
//                       offsets reach it again (ali-ons and Go: push; Java: a push and a lite-pull consumer)
//   producer-failover   two groups broker-a / broker-b; a default-settings producer sends; kill -9 of master-a:
//                       failed sends, time to the last failure, slowest send
//   sync-store-loss     SYNC_MASTER (inSyncReplicas=2) + slave under 8 sends in flight; kill -9 of the master and
//                       its store deleted: every acknowledged message must be in the slave's commit log
//   async-store-loss    the same with ASYNC_MASTER: how many acknowledged messages the slave lacked (measured)
//   slave-down          SYNC_MASTER, slaveTimeout=1000: a dead slave, a stalled one (SIGSTOP), going on (answer codes
//                       and times; 4.9.8 semantics with --ha-semantics=4.9.8 or the official 4.9.8)
//
//   node compat/ha-faults.mjs [--servers=ours,5.3.3] [--scenarios=all|a,b] [--seed=N] [--quick] [--json=FILE]
//        [--clients=ali-ons,go,java,java5] [--ha-semantics=5.3.3|4.9.8 (ours)] [--log-dir=DIR] [--keep]
// --clients: the stock clients under test (default ali-ons); `go` runs consumer-failover and producer-failover with
// the Go client (github.com/apache/rocketmq-client-go/v2, compat/go-client, built on first use); `java` (rocketmq-client
// 4.9.8), `java5` (5.3.3), `java@V` with the stock Java client (compat/jclient, built by Maven on first use): a push
// consumer (`java-push`), a lite-pull consumer (`java-litepull`) and the producer; `java-push` / `java-litepull` alone
// run just that consumer. The other scenarios are ali-ons only.
//
// Run `npm run build` first. Exit 0 when every scenario passed, 1 otherwise (figures are printed either way).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { children, killTree } from './lib/servers.mjs';
import { guardProcess, parseFlags, sayer, seedOf } from './lib/script-args.mjs';
import { rng } from './lib/ha-tools.mjs';
import { slowOrDeadSlave, storeLoss } from './lib/ha-scenarios.mjs';
import { consumerClient, consumerFailover, producerFailover } from './lib/ha-failover.mjs';
import { consumerFailoverWith, producerFailoverWith } from './lib/ha-client-scenarios.mjs';
import * as goClient from './lib/go-client.mjs';
import { javaClientVersion } from './lib/java-client.mjs';

const SCENARIOS = {
  'consumer-failover': consumerFailover,
  'producer-failover': producerFailover,
  'sync-store-loss': (kind, env, random) => storeLoss(kind, env, random, 'SYNC_MASTER'),
  'async-store-loss': (kind, env, random) => storeLoss(kind, env, random, 'ASYNC_MASTER'),
  'slave-down': slowOrDeadSlave,
};

/** The scenarios per stock client (ali-ons in-process; the others as processes through compat/lib/<client>-client.mjs). */
const CLIENTS = {
  'ali-ons': SCENARIOS,
  go: {
    'consumer-failover': (kind, env, random) => consumerFailoverWith(goClient, kind, env, random),
    'producer-failover': (kind, env, random) => producerFailoverWith(goClient, kind, env, random),
  },
};

/**
 * The scenarios of a client name: CLIENTS, or a Java one (compat/lib/java-client.mjs): `java-push` / `java-litepull`
 * (consumer-failover with that consumer), `java` (producer-failover with DefaultMQProducer); java5, java@V alike.
 */
function clientRuns(client) {
  if (CLIENTS[client]) return CLIENTS[client];
  const m = /^(.+?)(?:-(push|litepull))?$/.exec(client);
  if (!javaClientVersion(m[1])) return null;
  if (m[2]) return { 'consumer-failover': (kind, env, random) => consumerFailover(kind, env, random, consumerClient(client)) };
  return { 'producer-failover': (kind, env, random) => producerFailover(kind, env, random, client) };
}

function parseArgs(argv) {
  const o = parseFlags('ha-faults', argv, { servers: 'ours,5.3.3', scenarios: 'all', seed: '', quick: false, json: '', clients: 'ali-ons', haSemantics: '5.3.3', logDir: '', keep: false });
  const scenarios = o.scenarios === 'all' ? Object.keys(SCENARIOS) : o.scenarios.split(',').map((s) => s.trim()).filter(Boolean);
  for (const s of scenarios) {
    if (!SCENARIOS[s]) {
      console.error(`ha-faults: unknown scenario ${s} (${Object.keys(SCENARIOS).join(', ')})`);
      process.exit(2);
    }
  }
  const servers = o.servers.split(',').map((s) => s.trim()).filter(Boolean);
  // a Java client name alone stands for its push consumer, its lite-pull consumer and its producer
  const clients = o.clients.split(',').map((s) => s.trim()).filter(Boolean)
    .flatMap((c) => (javaClientVersion(c) ? [`${c}-push`, `${c}-litepull`, c] : [c]));
  for (const c of clients) {
    if (!clientRuns(c)) {
      console.error(`ha-faults: unknown client ${c} (${Object.keys(CLIENTS).join(', ')}, java, java5, java@V, java-push, java-litepull)`);
      process.exit(2);
    }
  }
  return { ...o, scenarios, servers, clients, seed: seedOf(o.seed) };
}

const say = sayer('ha-faults');

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rmq-ha-faults-'));
  const logDir = o.logDir || path.join(tmp, 'logs');
  fs.mkdirSync(logDir, { recursive: true });
  guardProcess('ha-faults');
  say(`seed ${o.seed} (replay with --seed=${o.seed}); servers ${o.servers.join(', ')}; clients ${o.clients.join(', ')}; scenarios ${o.scenarios.join(', ')}${o.quick ? ' (quick)' : ''}`);
  const results = [];
  for (const scenario of o.scenarios) {
    for (const client of o.clients) {
      const run = clientRuns(client)[scenario];
      if (!run) {
        // (a Java client's consumers and producer are separate names: each has only its own scenario)
        if (!javaClientVersion(client.replace(/-(push|litepull)$/, ''))) say(`-- ${scenario}: not written for the ${client} client, skipped`);
        continue;
      }
      const name = client === 'ali-ons' ? scenario : `${scenario}/${client}`;
      for (const kind of o.servers) {
        const label = kind === 'ours' ? 'ours' : `official-${kind}`;
        // One random source per (scenario, server) from the seed: both servers (and every client) meet the same faults.
        const random = rng(o.seed ^ [...scenario].reduce((h, ch) => Math.imul(h, 31) + ch.charCodeAt(0), 7));
        const env = { tmp, logDir, quick: o.quick, seed: o.seed, haSemantics: o.haSemantics };
        say(`== ${name} × ${label}`);
        const t0 = Date.now();
        const r = await run(kind, env, random);
        const seconds = +((Date.now() - t0) / 1000).toFixed(1);
        results.push({ scenario: name, client, server: label, seed: o.seed, seconds, ...r });
        say(`${r.status} ${name} × ${label} (${seconds}s, seed ${o.seed})${r.reason ? `: ${r.reason}` : ''}`);
        say(`   ${JSON.stringify(r.figures)}`);
      }
    }
  }
  if (o.json) fs.writeFileSync(o.json, `${JSON.stringify({ seed: o.seed, quick: o.quick, results }, null, 2)}\n`);
  say('summary:');
  for (const r of results) say(`  ${r.status.padEnd(4)} ${r.scenario.padEnd(21)} ${r.server.padEnd(15)} ${JSON.stringify(r.figures)}`);
  if (!o.keep) fs.rmSync(tmp, { recursive: true, force: true });
  else say(`kept ${tmp}`);
  process.exit(results.every((r) => r.status === 'PASS') ? 0 : 1);
}

main().catch((e) => {
  console.error(`ha-faults: ${e.stack ?? e}`);
  for (const ch of children) killTree(ch, 'SIGKILL');
  process.exit(1);
});
