// The stock Go client (github.com/apache/rocketmq-client-go/v2, pinned in compat/go-client/go.mod) for the fault
// scripts: compat/go-client built once per run into compat/.cache/go-client/ (git-ignored; modules through the Go
// module proxy, as compat/go/run.sh does), then one process per role reading its JSON lines:
//   startSender(...)        the shape of dledger-sender.mjs's: acked, failedAt, tried, okSince(t), done; stop with
//                           `s.sending = false` or `await s.stop()` (SIGTERM, the program stops after the send under way)
//   startPushConsumer(...)  received (one entry per delivery), ready, close()
// Every process joins servers.mjs's `children`, so a script's guard kills it on a crash or Ctrl-C.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, children, killTree, run } from './servers.mjs';

export const name = 'go';
const SRC = path.join(ROOT, 'compat/go-client');
const BIN = path.join(ROOT, 'compat/.cache/go-client/go-client');

let building = null;

/** Builds compat/go-client (once per process); rejects with the tool's output when go is missing or the build fails. */
export function buildGoClient(logDir) {
  building ??= (async () => {
    const logFile = logDir ? path.join(logDir, 'go-client-build.log') : undefined;
    fs.mkdirSync(path.dirname(BIN), { recursive: true });
    for (const args of [['mod', 'download'], ['build', '-o', BIN, '.']]) {
      const r = await run('go', args, { cwd: SRC, logFile, timeoutMs: 1_200_000 }); // a fresh GOCACHE compiles the standard library too (7 min at load 18)
      if (r.code !== 0) throw new Error(`go ${args.join(' ')} in compat/go-client failed (${r.code}): ${r.output.trim().slice(-400)}`);
    }
    return BIN;
  })();
  return building;
}

let seq = 0;

/**
 * Starts the Go program with `args`; `onLine(obj)` gets every JSON line. Resolves once the process is running;
 * `exited` resolves with { code, stderr } when it ends.
 */
async function launch(role, args, logDir, onLine) {
  const bin = await buildGoClient(logDir);
  const tag = `go-${role}-${process.pid}-${++seq}`;
  const logArgs = logDir ? [`-log=${path.join(logDir, `${tag}.rlog`)}`] : [];
  // own process group (killTree); the broadcasting offset store of the client would write under $HOME
  const child = spawn(bin, [`-role=${role}`, ...logArgs, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'], detached: true,
    env: { ...process.env, 'rocketmq.client.localOffsetStoreDir': logDir ?? path.join(ROOT, 'compat/.cache/go-client') },
  });
  children.add(child);
  let partial = '';
  let stderr = '';
  child.stdout.on('data', (b) => {
    const lines = (partial + b.toString()).split('\n');
    partial = lines.pop();
    for (const l of lines) {
      if (!l.trim()) continue;
      try {
        onLine(JSON.parse(l));
      } catch {
        stderr += `unparsed stdout line: ${l}\n`;
      }
    }
  });
  child.stderr.on('data', (b) => {
    stderr = (stderr + b.toString()).slice(-4000);
  });
  const exited = new Promise((resolve) => {
    child.on('error', (e) => {
      stderr += `${e}\n`;
    });
    child.on('close', (code, signal) => {
      children.delete(child);
      if (logDir && stderr) fs.appendFileSync(path.join(logDir, `${tag}.stderr`), stderr);
      resolve({ code: code ?? signal, stderr });
    });
  });
  return { child, exited };
}

/**
 * A Go producer with default settings (but the name server) sending unique bodies `${bodyPrefix}-<pid>-<n>` to
 * `topic` one at a time. acked: [{ body, queueId, queueOffset, msgId (offset msgId), uniqId, brokerName, sentAt, at }]
 * in arrival order; failedAt: times of failed sends; failures: their error texts (first 200); failuresByError:
 * every failure counted by its text with the numbers (ports, addresses) replaced by N.
 */
export function startSender(nsAddr, topic, producerGroup, bodyPrefix, { logDir } = {}) {
  const s = { name, acked: [], failedAt: [], failures: [], failuresByError: {}, tried: 0, error: null };
  let stopRequested = false;
  let proc = null;
  let markReady;
  s.ready = new Promise((r) => {
    markReady = r;
  });
  Object.defineProperty(s, 'sending', {
    get: () => !stopRequested,
    set(v) {
      if (v || stopRequested) return;
      stopRequested = true;
      if (proc) proc.child.kill('SIGTERM');
    },
  });
  s.done = (async () => {
    try {
      proc = await launch('producer', [`-namesrv=${nsAddr}`, `-topic=${topic}`, `-group=${producerGroup}`, `-prefix=${bodyPrefix}`], logDir, (m) => {
        if (m.event === 'started') markReady();
        else if (m.event === 'failed') s.error = m.error;
        else if (m.event) return;
        else if (m.ok) {
          s.tried++;
          s.acked.push({ body: m.body, queueId: m.queueId, queueOffset: m.queueOffset, msgId: m.msgId, uniqId: m.uniqId, brokerName: m.brokerName, sentAt: m.sentAt, at: m.at });
        } else {
          s.tried++;
          s.failedAt.push(m.at);
          const why = m.error ?? `status ${m.status}`;
          if (s.failures.length < 200) s.failures.push(why);
          const key = why.replace(/\d+/g, 'N');
          s.failuresByError[key] = (s.failuresByError[key] ?? 0) + 1;
        }
      });
    } catch (e) {
      s.error = e.message;
      markReady();
      return;
    }
    if (stopRequested) proc.child.kill('SIGTERM');
    const { code, stderr } = await proc.exited;
    if (code !== 0 && !s.error) s.error = `go producer exited ${code}: ${stderr.trim().slice(-300)}`;
    markReady();
  })();
  /** Stops sending (as `sending = false`); resolves once the process ended. */
  s.stop = () => {
    s.sending = false;
    return s.done;
  };
  s.okSince = (t) => {
    let n = 0;
    for (let i = s.acked.length - 1; i >= 0 && s.acked[i].at > t; i--) n++;
    return n;
  };
  return s;
}

/**
 * A Go push consumer (clustering, from the first offset, tag "*"). received: [{ body, queueId, queueOffset,
 * brokerName, msgId, offsetMsgId, at }], one per delivery (redeliveries appear again). `onMessage(m)` is called
 * for each. close() stops it (SIGTERM; SIGKILL after 20 s).
 */
export async function startPushConsumer(nsAddr, topic, consumerGroup, { logDir, consumeDelayMs = 0, onMessage } = {}) {
  const c = { name, received: [], error: null };
  let markReady;
  const ready = new Promise((r) => {
    markReady = r;
  });
  const proc = await launch('push', [`-namesrv=${nsAddr}`, `-topic=${topic}`, `-group=${consumerGroup}`, `-consume-delay-ms=${consumeDelayMs}`], logDir, (m) => {
    if (m.event === 'started') markReady(true);
    else if (m.event === 'failed') {
      c.error = m.error;
      markReady(false);
    } else if (!m.event) {
      c.received.push(m);
      onMessage?.(m);
    }
  });
  proc.exited.then(({ code, stderr }) => {
    if (code !== 0 && !c.error) c.error = `go push consumer exited ${code}: ${stderr.trim().slice(-300)}`;
    markReady(false);
  });
  c.ready = ready.then((ok) => {
    if (!ok) throw new Error(`go push consumer did not start: ${c.error}`);
  });
  c.close = async () => {
    proc.child.kill('SIGTERM');
    const timer = setTimeout(() => killTree(proc.child, 'SIGKILL'), 20_000);
    await proc.exited;
    clearTimeout(timer);
  };
  return c;
}
