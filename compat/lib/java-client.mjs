// A stock RocketMQ Java client process for the fault scripts (compat/jclient, jclient.Client) on a chosen
// rocketmq-client version: a producer recording every SEND_OK and failure, or a push / lite-pull consumer recording
// every message received. The producer has the shape of startSender (dledger-sender.mjs) and go-client.mjs: acked,
// failedAt, tried, okSince, done, stop(), error; consumers have received, onMessage, stop().
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { REAL_JAVA } from '../../bench/java-driver.mjs';
import { ROOT, children, killTree } from './servers.mjs';

/** `java` → 4.9.8, `java5` → 5.3.3, `java@V` → V (rocketmq-client versions this machine's Maven serves). */
export function javaClientVersion(name) {
  if (name === 'java') return '4.9.8';
  if (name === 'java5') return '5.3.3';
  const m = /^java@(\d+\.\d+\.\d+)$/.exec(name);
  return m ? m[1] : null;
}

const built = new Map();

/** Builds compat/jclient for `version` once (maven, minutes the first time) and resolves its classpath. */
export function javaClasspath(version) {
  if (!built.has(version)) {
    built.set(version, new Promise((resolve, reject) => {
      const p = spawn('bash', [path.join(ROOT, 'compat/jclient/build.sh'), version], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      p.stdout.on('data', (b) => (out += b));
      p.on('close', (code) => (code === 0 ? resolve(out.trim().split('\n').pop()) : reject(new Error(`jclient build.sh ${version} exited ${code}`))));
    }));
  }
  return built.get(version);
}

/**
 * Starts one client process. `onLine(ev)` sees every JSON line; `ready` resolves on its "ready" line (rejects when
 * the process ends first); `exited` resolves with the exit code. stop(): end of stdin, then the process closes its
 * client (offsets persisted) and exits; SIGKILL after `graceMs`.
 */
function startProcess(cp, work, args, onLine) {
  const home = path.join(work, `jclient-${process.pid}-${Math.random().toString(36).slice(2, 8)}`);
  fs.mkdirSync(home, { recursive: true });
  const proc = spawn(REAL_JAVA, ['-Xms64m', '-Xmx512m', '-Djava.net.preferIPv4Stack=true', `-Duser.home=${home}`,
    `-Drocketmq.client.logRoot=${path.join(home, 'logs')}`, '-Drocketmq.client.logLevel=WARN', '-cp', cp, 'jclient.Client', ...args],
  { stdio: ['pipe', 'pipe', fs.openSync(path.join(home, 'stderr.log'), 'a')] });
  children.add(proc);
  let readyResolve;
  let readyReject;
  const ready = new Promise((res, rej) => {
    readyResolve = res;
    readyReject = rej;
  });
  const errors = [];
  readline.createInterface({ input: proc.stdout }).on('line', (line) => {
    let ev;
    try {
      ev = JSON.parse(line);
    } catch {
      return;
    }
    if (ev.event === 'ready') readyResolve();
    else if (ev.event === 'error') errors.push(ev.error);
    else onLine(ev);
  });
  const exited = new Promise((resolve) => proc.on('close', (code) => {
    children.delete(proc);
    readyReject(new Error(`java client ${args.join(' ')} ended before it was ready (code ${code}${errors.length ? `: ${errors[0]}` : ''}; see ${home})`));
    resolve(code);
  }));
  ready.catch(() => undefined);
  proc.stdin.on('error', () => undefined);
  const stop = async (graceMs = 60_000) => {
    proc.stdin.end();
    const timer = setTimeout(() => killTree(proc, 'SIGKILL'), graceMs);
    const code = await exited;
    clearTimeout(timer);
    return code;
  };
  return { proc, ready, exited, stop, errors, home };
}

/**
 * A Java producer (default settings but the name server) sending `${bodyPrefix}-0`, `-1`, ... one at a time.
 * acked: [{ body, queueId, queueOffset, msgId (offset msgId), uniqId, brokerName, sentAt, at }] in arrival order;
 * failed: [{ body, error, sentAt, at }]; failedAt: their times.
 */
export function startJavaSender(cp, work, nsAddr, topic, producerGroup, bodyPrefix) {
  const s = { acked: [], failed: [], failedAt: [], tried: 0 };
  const p = startProcess(cp, work, ['--role', 'producer', '--namesrv', nsAddr, '--topic', topic, '--group', producerGroup, '--prefix', bodyPrefix], (ev) => {
    if (ev.event === 'ok') {
      s.tried++;
      const { event, ...ack } = ev;
      s.acked.push(ack);
    } else if (ev.event === 'fail') {
      s.tried++;
      s.failed.push(ev);
      s.failedAt.push(ev.at);
    }
  });
  Object.assign(s, { proc: p.proc, ready: p.ready, errors: p.errors, error: null });
  let stopping = false;
  s.done = p.exited.then((code) => {
    // as go-client.mjs: `error` says the sender ended on its own (the scripts stop waiting for it)
    if (!stopping) s.error = `java producer exited ${code}${p.errors.length ? `: ${p.errors[0]}` : ''}`;
    return code;
  });
  s.stop = async () => {
    stopping = true;
    await p.stop();
  };
  /** SEND_OKs that arrived after `t`. */
  s.okSince = (t) => {
    let n = 0;
    for (let i = s.acked.length - 1; i >= 0 && s.acked[i].at > t; i--) n++;
    return n;
  };
  return s;
}

/**
 * A Java consumer of `topic` in `group` from the first offset: role 'push' (DefaultMQPushConsumer) or 'litepull'
 * (DefaultLitePullConsumer, subscribe, auto-commit). received: [{ body, queueId, queueOffset, brokerName, msgId, at }];
 * onMessage(m) is called for each. consumeDelayMs: a pause after each message (a slower consumer).
 */
export function startJavaConsumer(cp, work, role, nsAddr, topic, group, { consumeDelayMs = 0, onMessage = () => undefined } = {}) {
  const c = { received: [] };
  const p = startProcess(cp, work, ['--role', role, '--namesrv', nsAddr, '--topic', topic, '--group', group, '--consumeDelayMs', String(consumeDelayMs)], (ev) => {
    if (ev.event !== 'msg') return;
    const { event, ...m } = ev;
    c.received.push(m);
    onMessage(m);
  });
  Object.assign(c, { proc: p.proc, ready: p.ready, errors: p.errors, done: p.exited, stop: p.stop });
  return c;
}
