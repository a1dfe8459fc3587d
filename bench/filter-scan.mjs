#!/usr/bin/env node
// The store's side of a SQL92-filtered backlog read, in-process (no network, no client): a store of N 1 KiB
// messages over 16 queues, with the properties the bench driver sets (k = i % 8, region, UNIQ_KEY, WAIT, TAGS),
// then every queue pulled from 0 to its end at once with "k = 0 AND region IN ('eu', 'us')" (32 per pull, 1 in 8
// taken), ROUNDS times; with --filter=tag, by tag t0 instead, matched on the consume queue's tag hash (message i
// has tag t((i / 16) mod 8): 1 in 8 of each queue, where k = 0 lies in two queues). Prints the process's CPU
// (user+sys) per backlog message per round and the log reads made; with several dists they take turns (A B A B),
// each in its own process. Steadier than bench.mjs filter-sql on a shared machine, as it leaves out the consumer
// and the network.
//
//   node bench/filter-scan.mjs --dist=/path/to/main/dist,dist --messages=200000 --rounds=3 --turns=2 [--filter=sql|tag]
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const argv = process.argv.slice(2);
const opt = (n, d) => argv.find((a) => a.startsWith(`--${n}=`))?.slice(n.length + 3) ?? d;
const N = Number(opt('messages', 200000));
const ROUNDS = Number(opt('rounds', 3));
const child = opt('child', undefined);
const FILTER = opt('filter', 'sql');
if (FILTER !== 'sql' && FILTER !== 'tag') throw new Error(`--filter=sql|tag, not ${FILTER}`);

if (!child) {
  const dists = opt('dist', 'dist').split(',');
  for (let t = 0; t < Number(opt('turns', 2)); t++) {
    for (const d of dists) {
      process.stdout.write(execFileSync(process.execPath, [fileURLToPath(import.meta.url), `--child=${path.resolve(d)}`, `--messages=${N}`, `--rounds=${ROUNDS}`, `--filter=${FILTER}`], { encoding: 'utf8' }));
    }
  }
  process.exit(0);
}

const { createMessageStore } = await import(path.join(child, 'store/index.js'));
const { compileSql92 } = await import(path.join(child, 'broker/filter/sql92/index.js'));
const { pullMessageFilter, sqlPropertiesFilter } = await import(path.join(child, 'broker/filter/sql-filter.js'));
const { javaStringHashCode } = await import(path.join(child, 'common/java-hash.js'));
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rmq-filter-scan-'));
try {
  const store = createMessageStore({ storePathRootDir: root });
  await store.start();
  const ip = Buffer.from([127, 0, 0, 1]);
  const body = Buffer.alloc(1024, 97);
  const QUEUES = 16;
  const tagOf = (i) => (FILTER === 'tag' ? Math.floor(i / QUEUES) : i) % 8;
  let inflight = [];
  for (let i = 0; i < N; i++) {
    const uniq = `7F0000011F8B18B4AAC2${(0x100000 + i).toString(16).toUpperCase()}0000`;
    const props = `k\u0001${i % 8}\u0002region\u0001${i & 1 ? 'us' : 'eu'}\u0002UNIQ_KEY\u0001${uniq}\u0002WAIT\u0001true\u0002TAGS\u0001t${tagOf(i)}\u0002`;
    inflight.push(store.putMessage({
      topic: 'F', queueId: i % QUEUES, flag: 0, body, propertiesString: props, tagsCode: javaStringHashCode(`t${tagOf(i)}`), sysFlag: 0, bornTimestamp: Date.now(),
      bornHost: { ip, port: 1 }, storeHost: { ip, port: 2 }, reconsumeTimes: 0, preparedTransactionOffset: 0,
    }));
    if (inflight.length >= 256) {
      await Promise.all(inflight);
      inflight = [];
    }
  }
  await Promise.all(inflight);
  await new Promise((r) => setTimeout(r, 1500));
  const t0 = javaStringHashCode('t0');
  const filter = FILTER === 'tag'
    ? pullMessageFilter((tagsCode) => tagsCode === t0, undefined)
    : pullMessageFilter(undefined, sqlPropertiesFilter(compileSql92("k = 0 AND region IN ('eu', 'us')")));
  for (let r = 0; r < ROUNDS; r++) {
    const reads0 = store.stats.syncReads + store.stats.asyncReads;
    const c0 = process.cpuUsage();
    let taken = 0;
    await Promise.all(Array.from({ length: QUEUES }, async (_, q) => {
      const max = store.getMaxOffsetInQueue('F', q);
      for (let off = 0; off < max;) {
        const res = await store.getMessage('F', q, off, 32, 1 << 22, filter);
        taken += res.records.length;
        res.pins?.release();
        off = res.nextBeginOffset;
      }
    }));
    const c = process.cpuUsage(c0);
    const reads = store.stats.syncReads + store.stats.asyncReads - reads0;
    console.log(`${child} round ${r + 1}/${ROUNDS}: ${((c.user + c.system) / N).toFixed(3)} us CPU per backlog msg (user ${(c.user / N).toFixed(3)}, sys ${(c.system / N).toFixed(3)}), ${taken} taken, ${reads} reads`);
  }
  await store.shutdown();
} finally {
  fs.rmSync(root, { recursive: true, force: true });
}
