#!/usr/bin/env node
// gRPC (5.x client) scenarios against an endpoint: our broker's own, or the official rocketmq-proxy 5.3.3 in front
// of the official broker (compat/runner.mjs starts either). Stock clients: rocketmq-client-nodejs 1.0.8, ali-ons
// (remoting, for the mixed scenarios), rocketmq-client-java 5.2.0 and 5.0.2 (compat/grpc5/java/run.sh), and a raw
// grpc-js client for bad input.
//
//   node compat/grpc5/run.mjs --endpoint=127.0.0.1:G --namesrv=127.0.0.1:N --broker=127.0.0.1:B --cert=PEM
//        [--java=5.2.0,5.0.2] [--only=a,b] [--list]
//
// Prints `PASS name (1.2s)` / `FAIL name (1.2s): reason`, then `scenarios: N passed, N failed` (compat/runner.mjs
// parses these lines). Exit 0 = all passed. Topics (with message.type) and groups are created with raw admin
// requests first, as mqadmin updateTopic / updateSubGroup would.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { awaitRoute, createGroup, createTopic } from '../grpc/admin.mjs';
import { badInput } from './bad-input.mjs';
import { NODE_SCENARIOS, Scope, Skip } from './node-scenarios.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const args = Object.fromEntries(process.argv.slice(2).map((a) => {
  const m = /^--([a-z]+)(?:=(.*))?$/.exec(a);
  if (!m) throw new Error(`unexpected argument ${a}`);
  return [m[1], m[2] ?? 'true'];
}));
const RUN = Date.now().toString(36);
const JAVA_VERSIONS = (args.java ?? '5.2.0,5.0.2').split(',').filter(Boolean);
const JAVA_SCENARIOS = ['producerConsumer', 'fifo', 'delay', 'recall', 'transaction', 'redelivery', 'retryToDlq', 'pushConsumer'];
/** Scenarios an older client cannot run: RecallMessage came with rocketmq-client-java 5.2.0 (5.0.2 has no recallMessage). */
const JAVA_NOT_IN = { recall: ['5.0.2'] };

/** Unique topic and group names per scenario, created on the broker before the scenario runs. */
function namer(env, scenario) {
  let i = 0;
  const pending = [];
  return {
    run: RUN,
    topic(type, queues = 4) {
      const t = `G5T_${scenario}_${RUN}_${i++}`;
      pending.push(createTopic(env.broker, t, { type, queues }).then(() => awaitRoute(env.namesrv, t)));
      return t;
    },
    group({ retryMaxTimes = 16, orderly = false } = {}) {
      const g = `G5G_${scenario}_${RUN}_${i++}`;
      pending.push(createGroup(env.broker, g, { retryMaxTimes, orderly }));
      return g;
    },
    ready: () => Promise.all(pending.splice(0)),
  };
}

/** A scenario's topics and groups exist before its first client starts (the namer queues the admin requests). */
function deferred(env, name, fn) {
  return async (scope) => {
    const n = namer(env, name);
    for (const m of ['producer', 'simple', 'push', 'onsProducer', 'onsConsumer']) {
      const orig = scope[m].bind(scope);
      scope[m] = async (...a) => {
        await n.ready();
        return orig(...a);
      };
    }
    await fn(scope, n);
  };
}

function javaRun(env, version, scenario) {
  return async () => {
    const n = namer(env, `j${version.replace(/\./g, '')}${scenario}`);
    const names = {
      topic: n.topic(scenario === 'fifo' ? 'FIFO' : scenario === 'delay' || scenario === 'recall' ? 'DELAY' : scenario === 'transaction' ? 'TRANSACTION' : 'NORMAL', scenario === 'retryToDlq' ? 1 : 4),
      group: n.group({ orderly: scenario === 'fifo', retryMaxTimes: scenario === 'retryToDlq' ? 1 : 16 }),
    };
    await n.ready();
    if (scenario === 'retryToDlq') {
      await createTopic(env.broker, `%DLQ%${names.group}`, { type: 'NORMAL', queues: 1 }).catch(() => undefined);
      await awaitRoute(env.namesrv, `%DLQ%${names.group}`);
    }
    const out = await new Promise((resolve) => {
      const child = spawn('bash', [path.join(HERE, 'java/run.sh'), version, scenario, env.endpoint, names.topic, names.group], { stdio: ['ignore', 'pipe', 'pipe'] });
      let text = '';
      child.stdout.on('data', (d) => (text += d));
      child.stderr.on('data', (d) => (text += d));
      const timer = setTimeout(() => child.kill('SIGKILL'), 10 * 60_000);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, text });
      });
    });
    if (out.code !== 0 || !/^RESULT PASS/m.test(out.text)) {
      const reason = /^RESULT FAIL (.*)$/m.exec(out.text)?.[1] ?? out.text.split('\n').filter(Boolean).slice(-3).join(' | ');
      throw new Error(reason);
    }
  };
}

async function main() {
  const env = { endpoint: args.endpoint, namesrv: args.namesrv, broker: args.broker, cert: args.cert };
  const all = {};
  for (const [name, fn] of Object.entries(NODE_SCENARIOS)) all[`Grpc5Node#${name}`] = (scope) => deferred(env, name, fn)(scope);
  all['Grpc5Raw#badInput'] = async () => {
    const n = namer(env, 'bad');
    const t = n.topic('NORMAL', 1);
    const g = n.group();
    await n.ready();
    await badInput(env, { run: n.run, topic: () => t, group: () => g });
  };
  for (const v of JAVA_VERSIONS) {
    for (const sc of JAVA_SCENARIOS) if (!JAVA_NOT_IN[sc]?.includes(v)) all[`Grpc5Java${v.replace(/\./g, '')}#${sc}`] = javaRun(env, v, sc);
  }
  if (args.list) {
    for (const n of Object.keys(all)) console.log(n);
    return 0;
  }
  for (const k of ['endpoint', 'namesrv', 'broker', 'cert']) if (!args[k]) throw new Error(`--${k} is required`);
  const only = args.only ? new Set(args.only.split(',')) : undefined;
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for (const [name, fn] of Object.entries(all)) {
    if (only && !only.has(name) && !only.has(name.split('#')[1])) continue;
    console.log(`RUN ${name}`);
    const t0 = Date.now();
    const scope = new Scope(env);
    try {
      await fn(scope);
      passed++;
      console.log(`PASS ${name} (${((Date.now() - t0) / 1000).toFixed(1)}s)`);
    } catch (err) {
      if (err instanceof Skip) {
        skipped++;
        console.log(`SKIP ${name} (${((Date.now() - t0) / 1000).toFixed(1)}s): ${err.message}`);
        continue;
      }
      failed++;
      console.log(`FAIL ${name} (${((Date.now() - t0) / 1000).toFixed(1)}s): ${String(err?.message ?? err).split('\n')[0]}`);
    } finally {
      await scope.close();
    }
  }
  console.log(`scenarios: ${passed} passed, ${failed} failed, ${skipped} skipped`);
  return failed > 0 ? 1 : 0;
}

// A stream the server resets after a client released it emits 'error' without a listener (brief §5.1): keep going.
process.on('uncaughtException', (err) => console.error(`[grpc5] uncaught: ${err?.message ?? err}`));
main().then((code) => process.exit(code), (err) => {
  console.error(err?.stack ?? err);
  process.exit(2);
});
