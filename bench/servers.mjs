// The two servers under test: the official namesrv + broker through compat/official/official.sh (with the JVM
// options chosen in bench.mjs) and ours (`node dist/main.js start`). Each start returns a handle whose `ready`
// resolves with { readyMs, pids } once the server printed its ready line.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnUntil, waitExit, waitGone } from './proc.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..');
const OFFICIAL_SH = path.join(ROOT, 'compat/official/official.sh');
const REAL_JAVA = execFileSync('bash', ['-c', 'command -v java'], { encoding: 'utf8' }).trim();

/** Ours always runs with SQL92 filtering on, as official.sh configures the official broker (enablePropertyFilter). */
export const OURS_FIXED_ARGS = ['--enablePropertyFilter=true'];

/** `opts`: { CFG, store (directory), ports, logFd, log, profileDir (ours only) }. */
export function startServer(name, opts) {
  return name === 'official' ? startOfficial(opts) : startOurs(opts);
}

function startOfficial({ CFG, store, ports, logFd, log }) {
  const env = process.env;
  const t0 = performance.now();
  const { proc, ready } = spawnUntil('bash', [OFFICIAL_SH, 'start', CFG.officialVersion, store, String(ports.ns), String(ports.broker)], {
    stdio: ['ignore', 'pipe', logFd],
    env: { ...env, OFFICIAL_START_TIMEOUT: env.OFFICIAL_START_TIMEOUT ?? '170', PATH: `${path.join(HERE, 'official-java')}:${env.PATH}`, BENCH_REAL_JAVA: REAL_JAVA, BENCH_BROKER_JVM: CFG.brokerJvm, BENCH_NAMESRV_JVM: CFG.namesrvJvm,
      // the broker's own default file sizes (official.sh makes them small for the compatibility runs), as ours uses
      OFFICIAL_BROKER_EXTRA: `mappedFileSizeCommitLog=${1024 ** 3}\nmappedFileSizeConsumeQueue=${300000 * 20}\n${env.OFFICIAL_BROKER_EXTRA ?? ''}` },
  }, /^ready ns=/, 180000);
  let pids = [];
  return {
    name: 'official',
    t0,
    ports,
    storeDir: store,
    commitLogDir: path.join(store, 'store/commitlog'),
    ready: ready.then(async () => {
      const readyMs = performance.now() - t0;
      await waitExit(proc, 10000);
      pids = ['namesrv', 'broker'].map((k) => Number(fs.readFileSync(path.join(store, `${k}.pid`), 'utf8').trim()));
      let brokerProperties;
      try { brokerProperties = fs.readFileSync(path.join(store, 'home/conf/broker.properties'), 'utf8'); } catch { /* older official.sh */ }
      let jvmArgs;
      try { jvmArgs = pids.map((p) => fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').filter((a) => /^-X(ms|mx|mn)|^-XX:\+AlwaysPreTouch$/.test(a)).join(' ')); } catch { /* gone */ }
      return { readyMs, pids, brokerProperties, jvmArgs };
    }),
    /** The nameserver process alone (the namesrv scenario counts its CPU only). */
    namesrvPids: () => pids.slice(0, 1),
    async stop() {
      try { execFileSync('bash', [OFFICIAL_SH, 'stop', store], { stdio: ['ignore', 'ignore', logFd] }); } catch (e) { log(`  official.sh stop failed: ${e.message}`); }
    },
    async kill() {
      for (const p of pids) { try { process.kill(p, 'SIGKILL'); } catch { /* gone */ } }
      await waitGone(pids, 10000);
    },
  };
}

function startOurs({ CFG, store, ports, logFd, log, profileDir }) {
  const args = [
    ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
    ...(process.env.BENCH_OURS_NODE_ARGS ? process.env.BENCH_OURS_NODE_ARGS.split(' ').filter(Boolean) : []),
    path.resolve(ROOT, process.env.BENCH_OURS_DIST || 'dist', 'main.js'), 'start', `--namesrvPort=${ports.ns}`, `--listenPort=${ports.broker}`, `--storePathRootDir=${store}`, '--grpcServerPort=0',
    ...OURS_FIXED_ARGS, ...CFG.oursArgs,
  ];
  const t0 = performance.now();
  // BENCH_OURS_STDOUT=file keeps the server's stdout lines (e.g. --trace-gc output from BENCH_OURS_NODE_ARGS)
  const keep = process.env.BENCH_OURS_STDOUT ? fs.createWriteStream(process.env.BENCH_OURS_STDOUT, { flags: 'a' }) : undefined;
  const { proc, ready } = spawnUntil(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', logFd] }, /rocketmq-ts ready/, 120000,
    keep ? (line) => keep.write(`${line}\n`) : undefined);
  return {
    name: 'ours',
    t0,
    ports,
    storeDir: store,
    commitLogDir: path.join(store, 'commitlog'),
    ready: ready.then(() => ({ readyMs: performance.now() - t0, pids: [proc.pid] })),
    namesrvPids: () => [proc.pid],
    async stop() {
      if (proc.exitCode !== null) return;
      proc.kill('SIGTERM');
      if (!(await waitExit(proc, 30000))) { log('  ours did not exit 30s after SIGTERM; sending SIGKILL'); proc.kill('SIGKILL'); await waitExit(proc, 5000); }
    },
    async kill() {
      proc.kill('SIGKILL');
      await waitExit(proc, 10000);
    },
    proc,
  };
}
