// The fuzzer's runner: the real server as a child (with a probe of its event loop), several connections each
// sending generated frames, and the oracle. Every frame must get an answer with a remark (or success) or see its
// connection closed; the server must not crash, stall its event loop for more than 100 ms, lose an acknowledged
// message or leave a hole in a queue, and must shut down cleanly at the end, leaving a store whose every record
// and consume-queue entry checks out offline (store-check.ts). A failure names the seed and writes the frames of
// the moment as hex.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ResponseCode } from '../../src/common/response-code.js';
import { silentLogger } from '../../src/common/logger.js';
import { RequestCode } from '../../src/common/request-code.js';
import { type RemotingCommand, createRequest, isResponse } from '../../src/remoting/command.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { FrameDecoder } from '../../src/remoting/frame-decoder.js';
import { type ChildServer, ensureDist, startChildServer } from '../helpers/child-server.js';
import { type TestServer, createTopic } from '../helpers/server.js';
import { rawPull, rawSend } from '../durability/helpers.js';
import { type FuzzFrame, FrameGenerator, KEPT_TOPIC, Rng } from './generate.js';
import { type StoreCheckReport, checkStoreOffline } from './store-check.js';

export interface FuzzOptions {
  seed: number;
  durationMs: number;
  connections?: number;
  /** Where a failure's frames are written (hex). */
  artifactDir?: string;
  /** How long past `durationMs` the watchdog waits (default OVERRUN_MS). */
  overrunMs?: number;
}

export interface FuzzReport {
  seed: number;
  frames: number;
  answered: number;
  closedConnections: number;
  byCode: Record<string, number>;
  checkMessagesAcked: number;
  maxLoopStallMs: number;
  /** Event-loop gaps over 50 ms the probe saw: [gap ms, CPU ms used meanwhile], worst first. */
  loopGaps: Array<[number, number, number]>;
  /** The slowest answers: [request code, response code, ms], slowest first (long polls and relays take seconds). */
  slowestAnswers: Array<[number, number, number]>;
  /** Busy gaps over the limit with no frame sent around them (a starved fuzzer; the loop drained a backlog). */
  unattributedStalls: number;
  /** Wall time of each phase: the frames, waiting for the last answers, reading every queue back. */
  phaseMs: { fuzz: number; drain: number; verify: number };
  /** Messages read back from the check and fuzzed topics at the end. */
  verifiedMessages: number;
  /** Of those, the fuzzed topics': KEPT_TOPIC's, and FuzzT1's unless a fuzzed DELETE_TOPIC came after its sends. */
  verifiedFuzzedMessages: number;
  /** The offline check of the store after the clean shut-down (store-check.ts): every record and queue entry on disk. */
  storeCheck?: Omit<StoreCheckReport, 'failures'>;
  failures: string[];
}

/** Codes that answer a normal outcome without a remark (pull results, not-found queries). */
const QUIET_CODES = new Set<number>([
  ResponseCode.SUCCESS, ResponseCode.PULL_NOT_FOUND, ResponseCode.PULL_RETRY_IMMEDIATELY, ResponseCode.PULL_OFFSET_MOVED,
  ResponseCode.QUERY_NOT_FOUND,
]);
const STALL_MS = 100;
/**
 * The whole run (start-up, frames, last answers, read-back, shut-down) ends within its duration plus this, or a
 * watchdog kills the server, which ends every wait, and the failure names the phase that was stuck; the test's own
 * timeout (duration + 3 min) would say nothing. Fresh-machine CI: seed 1616 ran into that timeout once, unexplained.
 */
const OVERRUN_MS = 120_000;
/** Unsent bytes a connection may hold before the fuzzer waits for it to drain. */
const MAX_UNSENT_BYTES = 1 << 20;
/** What JS and Node error messages look like; a remark must say what is wrong in our words instead. */
const JS_ERROR_TEXT = new RegExp([
  '\\b(TypeError|RangeError|SyntaxError|ReferenceError)\\b', 'ERR_[A-Z_]{3,}', '\\bat .+:\\d+:\\d+', 'The value of "',
  'Cannot read propert', 'is not a function', 'Maximum call stack', 'Unexpected token', 'is not defined', 'is not iterable',
].join('|'));
const CHECK_TOPIC = 'FuzzCheck';
const CHECK_QUEUES = 2;
const PROBE = path.join(import.meta.dirname, 'probe.mjs');

interface Sent {
  frame: FuzzFrame;
  sentAt: number;
}

class FuzzConnection {
  readonly pending = new Map<number, Sent>();
  closedByServer = false;
  private readonly decoder = new FrameDecoder();
  private readonly socket: net.Socket;

  constructor(addr: string, private readonly onAnswer: (sent: Sent, res: RemotingCommand) => void, private readonly onClose: (c: FuzzConnection) => void) {
    const i = addr.lastIndexOf(':');
    this.socket = net.connect(Number(addr.slice(i + 1)), addr.slice(0, i));
    this.socket.on('error', () => undefined);
    const got: RemotingCommand[] = [];
    this.socket.on('data', (chunk: Buffer) => {
      got.length = 0;
      try {
        this.decoder.push(chunk, got);
      } catch {
        this.socket.destroy();
        return;
      }
      for (const cmd of got) {
        if (!isResponse(cmd)) continue; // the broker's own requests (notify, check-back): ignored
        const sent = this.pending.get(cmd.opaque);
        if (!sent) continue;
        this.pending.delete(cmd.opaque);
        this.onAnswer(sent, cmd);
      }
    });
    this.socket.on('close', () => this.onClose(this));
  }

  get alive(): boolean {
    return !this.socket.destroyed;
  }

  get writableLength(): number {
    return this.socket.writableLength;
  }

  /** Resolves once the socket drained or closed, or at `untilMs` (epoch ms). */
  drained(untilMs: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.socket.off('drain', done);
        this.socket.off('close', done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, untilMs - Date.now()));
      this.socket.once('drain', done);
      this.socket.once('close', done);
    });
  }

  send(frame: FuzzFrame, opaque: number): void {
    if (frame.expect === 'answer') this.pending.set(opaque, { frame, sentAt: Date.now() });
    this.socket.write(frame.bytes);
  }

  close(): void {
    this.socket.destroy();
  }
}

function describeFrame(f: FuzzFrame): string {
  const hex = f.bytes.length > 4096 ? `${f.bytes.subarray(0, 4096).toString('hex')}…(${f.bytes.length} bytes)` : f.bytes.toString('hex');
  return `code ${f.code} → ${f.target}, expect ${f.expect}: ${hex}`;
}

export async function runFuzz(opts: FuzzOptions): Promise<FuzzReport> {
  // RMQ_FUZZ_MAIN=<other checkout>/dist/main.js fuzzes another build.
  const main = process.env.RMQ_FUZZ_MAIN;
  if (!main) ensureDist();
  const storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rmqts-fuzz-'));
  const startedAt = Date.now();
  const overrunMs = opts.overrunMs ?? OVERRUN_MS;
  const server: ChildServer = await startChildServer([
    `--storePathRootDir=${storeDir}`, '--mappedFileSizeCommitLog=67108864', '--autoCreateSubscriptionGroup=true', '--recallMessageEnable=true',
  ], main, [`--import=${PROBE}`], overrunMs);
  const report: FuzzReport = {
    seed: opts.seed, frames: 0, answered: 0, closedConnections: 0, byCode: {}, checkMessagesAcked: 0, maxLoopStallMs: 0, loopGaps: [], slowestAnswers: [], unattributedStalls: 0,
    phaseMs: { fuzz: 0, drain: 0, verify: 0 }, verifiedMessages: 0, verifiedFuzzedMessages: 0, failures: [],
  };
  const recent: Array<{ at: number; text: string }> = [];
  const fail = (why: string, frames: FuzzFrame[] = []) => {
    if (report.failures.length < 20) report.failures.push(`${why}${frames.length ? `\n  ${frames.map(describeFrame).join('\n  ')}` : ''}`);
  };
  const gen = new FrameGenerator(new Rng(opts.seed));
  const conns: FuzzConnection[] = [];
  const control = new RemotingClient(silentLogger());
  const acked: Array<{ queueId: number; queueOffset: number; body: string }> = [];
  let phase = 'creating the topics';
  let aborted = false;
  const watchdog = setTimeout(() => {
    aborted = true;
    const waiting = conns.reduce((n, c) => n + c.pending.size, 0);
    report.failures.unshift(`the run did not end within ${Math.round((opts.durationMs + overrunMs) / 1000)} s: stuck ${phase}, after ${report.frames} frames (${waiting} awaiting an answer); the server is killed`);
    server.child.kill('SIGKILL');
    for (const c of conns) c.close();
    void control.close();
  }, Math.max(0, startedAt + opts.durationMs + overrunMs - Date.now()));
  try {
    const ts = { brokerAddr: server.brokerAddr, namesrvAddr: server.namesrvAddr } as TestServer;
    await createTopic(ts, CHECK_TOPIC, CHECK_QUEUES);
    for (const t of ['FuzzT0', 'FuzzT1']) await createTopic(ts, t, 4);

    const onAnswer = (sent: Sent, res: RemotingCommand) => {
      report.answered++;
      report.byCode[res.code] = (report.byCode[res.code] ?? 0) + 1;
      const tookMs = Date.now() - sent.sentAt;
      const slowest = report.slowestAnswers;
      if (slowest.length < 8 || tookMs > slowest[slowest.length - 1]![2]) {
        slowest.push([sent.frame.code, res.code, tookMs]);
        slowest.sort((a, b) => b[2] - a[2]);
        slowest.length = Math.min(slowest.length, 8);
      }
      const remark = res.remark ?? '';
      if (!QUIET_CODES.has(res.code) && remark.trim() === '') fail(`code ${res.code} answered without a remark`, [sent.frame]);
      if (remark.length > 1024) fail(`remark of ${remark.length} characters`, [sent.frame]);
      if (remark.includes(storeDir)) fail(`remark shows the store's path: ${remark.slice(0, 200)}`, [sent.frame]);
      if (JS_ERROR_TEXT.test(remark)) {
        fail(`remark carries JS error text: ${remark.slice(0, 300)}`, [sent.frame]);
      }
    };
    const onClose = (c: FuzzConnection) => {
      report.closedConnections++;
      c.closedByServer = true;
      c.pending.clear(); // closing is an allowed outcome for everything still waiting
    };
    const n = Math.max(2, opts.connections ?? 16);
    const pools = {
      broker: Array.from({ length: n - Math.max(1, Math.floor(n / 4)) }, () => null as FuzzConnection | null),
      namesrv: Array.from({ length: Math.max(1, Math.floor(n / 4)) }, () => null as FuzzConnection | null),
    };
    const connFor = (target: 'broker' | 'namesrv', k: number): FuzzConnection => {
      const pool = pools[target];
      const i = k % pool.length;
      let c = pool[i];
      if (!c || !c.alive) {
        c = new FuzzConnection(target === 'broker' ? server.brokerAddr : server.namesrvAddr, onAnswer, onClose);
        pool[i] = c;
        conns.push(c);
      }
      return c;
    };

    // The stall probe reports from the child's stderr.
    let stallsSeen = 0;
    let fuzzingSince = Infinity;
    const checkStalls = () => {
      const stalls = server.logged('FUZZPROBE stall');
      for (; stallsSeen < stalls.length; stallsSeen++) {
        const s = stalls[stallsSeen]!;
        const gap = Number(s.gapMs);
        if (Number(s.at) - gap < fuzzingSince) continue; // start-up (module loading, topic creation), not the frames
        report.maxLoopStallMs = Math.max(report.maxLoopStallMs, gap);
        report.loopGaps.push([gap, Number(s.cpuMs), Number(s.gcMs ?? 0)]);
        report.loopGaps.sort((a, b) => b[0] - a[0]);
        report.loopGaps.length = Math.min(report.loopGaps.length, 8);
        // Busy, not starved: the event-loop thread itself ran for more than STALL_MS of the gap, GC pauses not
        // counted (another process holding the machine's cores delays timers and stretches collections; that is
        // not ours to fix). Fresh-clone run at load 12-16: a 108 ms gap with 90 ms of loop-thread CPU and nothing
        // slow among the frames around it failed the old rule (CPU > 0.8 × gap).
        const busyMs = Number(s.cpuMs) - Number(s.gcMs ?? 0);
        if (gap > STALL_MS && busyMs > STALL_MS) {
          const at = Number(s.at);
          const around = recent.filter((r) => r.at >= at - gap - 200 && r.at <= at + 50).slice(-20).map((r) => r.text);
          // No frame sent from 200 ms before the gap to its end: this fuzzer was starved too, and the loop worked
          // through frames queued earlier on its 16 connections (libuv runs every ready read before the probe's
          // timer). Fresh-clone run with benchmarks on both cores: a 237 ms gap with 120 ms of loop CPU and no
          // frame around it. A frame that blocks the loop was sent just before, so such a gap is counted, not failed.
          if (around.length === 0) report.unattributedStalls++;
          else fail(`event loop stalled ${Math.round(gap)} ms (cpu ${Math.round(Number(s.cpuMs))} ms, gc ${Number(s.gcMs ?? 0)} ms); frames sent just before:\n  ${around.join('\n  ')}`);
        }
      }
    };

    let seq = 0;
    const checkSend = async () => {
      const queueId = seq % CHECK_QUEUES;
      const body = `check-${opts.seed}-${seq++}`;
      try {
        const res = await rawSend(control, server.brokerAddr, CHECK_TOPIC, queueId, Buffer.from(body));
        if (res.code === 0) acked.push({ queueId, queueOffset: Number(res.extFields.queueOffset), body });
      } catch {
        // not acknowledged: allowed to be missing
      }
    };

    const end = Date.now() + opts.durationMs;
    let lastCheck = 0;
    let opaque = 1;
    fuzzingSince = Date.now();
    phase = 'sending frames';
    while (Date.now() < end && server.child.exitCode === null && !aborted) {
      const frame = gen.next(opaque++);
      const c = connFor(frame.target, report.frames);
      c.send(frame, opaque - 1);
      recent.push({ at: Date.now(), text: describeFrame(frame) });
      if (recent.length > 400) recent.splice(0, 200);
      report.frames++;
      if (frame.expect === 'desync') c.close(); // its stream is garbage from here on; a new one replaces it
      // Pace: let answers come back; at most 16 frames in flight and ~1 MiB unsent on a connection.
      if (c.writableLength > MAX_UNSENT_BYTES) await c.drained(end);
      else if (report.frames % 16 === 0) await new Promise((r) => setImmediate(r));
      while (c.alive && c.pending.size >= 16 && Date.now() < end) await new Promise((r) => setTimeout(r, 2));
      if (Date.now() - lastCheck > 500) {
        lastCheck = Date.now();
        await checkSend();
        checkStalls();
        const now = Date.now();
        for (const conn of conns) {
          for (const [op, sent] of conn.pending) {
            if (now - sent.sentAt > sent.frame.answerWithinMs) {
              fail(`no answer and no close within ${sent.frame.answerWithinMs} ms`, [sent.frame]);
              conn.pending.delete(op);
            }
          }
        }
        for (let i = conns.length - 1; i >= 0; i--) if (!conns[i]!.alive && conns[i]!.pending.size === 0) conns.splice(i, 1);
      }
    }
    report.phaseMs.fuzz = Date.now() - fuzzingSince;
    if (server.child.exitCode !== null || server.child.signalCode !== null) {
      fail(`the server exited (${server.child.exitCode ?? server.child.signalCode}); frames sent last:\n  ${recent.slice(-20).map((r) => r.text).join('\n  ')}`);
    } else {
      // Everything still waiting gets its answer (or its close) within its deadline.
      phase = 'waiting for the last answers';
      const deadline = Date.now() + 30_000;
      while (conns.some((c) => c.pending.size > 0) && Date.now() < deadline && !aborted) await new Promise((r) => setTimeout(r, 100));
      for (const c of conns) for (const sent of c.pending.values()) fail('no answer and no close after the run', [sent.frame]);
      report.phaseMs.drain = Date.now() - fuzzingSince - report.phaseMs.fuzz;
      const verifyFrom = Date.now();
      phase = 'reading the check and fuzzed queues back';
      checkStalls();
      await checkSend();
      report.checkMessagesAcked = acked.length;
      // One pull of the read-back; undefined (and a failure) where a found answer carries nothing to move on with.
      const pullBack = async (topic: string, q: number, offset: number) => {
        try {
          const res = await rawPull(control, server.brokerAddr, topic, q, offset);
          if (res.code === 0 && res.messages.length === 0) {
            fail(`${topic}:${q}: pull at ${offset} answered FOUND without a message`);
            return undefined;
          }
          return res;
        } catch (e) {
          if (aborted) throw e;
          fail(`${topic}:${q}: pull at ${offset}: ${(e as Error).message}`);
          return undefined;
        }
      };
      // No acknowledged message lost, no hole in the check queues.
      for (let q = 0; q < CHECK_QUEUES; q++) {
        const want = new Map(acked.filter((a) => a.queueId === q).map((a) => [a.queueOffset, a.body]));
        let offset = 0;
        for (;;) {
          const res = await pullBack(CHECK_TOPIC, q, offset);
          if (!res || res.code !== 0) break;
          report.verifiedMessages += res.messages.length;
          for (const m of res.messages) {
            if (m.queueOffset !== offset) fail(`hole in ${CHECK_TOPIC}:${q} at ${offset} (next entry says ${m.queueOffset})`);
            const body = want.get(m.queueOffset);
            if (body !== undefined && body !== m.body.toString()) fail(`${CHECK_TOPIC}:${q}:${offset} holds another message`);
            want.delete(m.queueOffset);
            offset = m.queueOffset + 1;
          }
        }
        if (want.size > 0) fail(`${want.size} acknowledged message(s) of ${CHECK_TOPIC}:${q} missing, e.g. offset ${[...want.keys()][0]}`);
      }
      // The fuzzed topics: every queue contiguous from its min to its max, read with the topic's first config back
      // (the frames change permissions and queue counts; they never delete KEPT_TOPIC).
      for (const topic of [KEPT_TOPIC, 'FuzzT1']) {
        const res = await control.request(server.brokerAddr, createRequest(RequestCode.UPDATE_AND_CREATE_TOPIC, {
          topic, defaultTopic: 'TBW102', readQueueNums: '4', writeQueueNums: '4', perm: '6', topicFilterType: 'SINGLE_TAG', topicSysFlag: '0', order: 'false',
        }), 10_000);
        if (res.code !== ResponseCode.SUCCESS) fail(`${topic}: its config could not be put back (${res.code} ${res.remark ?? ''})`);
      }
      for (const topic of [KEPT_TOPIC, 'FuzzT1']) {
        for (let q = 0; q < 4; q++) {
          let offset = 0;
          for (;;) {
            const res = await pullBack(topic, q, offset);
            if (!res) break;
            if (res.code === ResponseCode.PULL_OFFSET_MOVED && res.nextBeginOffset > offset) {
              offset = res.nextBeginOffset;
              continue;
            }
            if (res.code !== 0) {
              if (offset < res.maxOffset) fail(`${topic}:${q}: pull at ${offset} answered ${res.code} below max ${res.maxOffset}`);
              break;
            }
            report.verifiedMessages += res.messages.length;
            report.verifiedFuzzedMessages += res.messages.length;
            for (const m of res.messages) {
              if (m.queueOffset !== offset) fail(`hole in ${topic}:${q} at ${offset}`);
              offset = m.queueOffset + 1;
            }
          }
        }
      }
      report.phaseMs.verify = Date.now() - verifyFrom;
    }
  } catch (e) {
    if (!aborted) throw e; // a request the watchdog's kill cut short: the watchdog's failure says what was stuck
  } finally {
    phase = 'shutting the server down';
    for (const c of conns) c.close();
    await control.close();
    const wasRunning = server.child.exitCode === null && server.child.signalCode === null;
    try {
      const ended = await server.stop({ killAfterMs: 30_000, giveUpAfterMs: 15_000 });
      if (wasRunning && ended.code !== 0 && !aborted) fail(`the server did not shut down cleanly (${ended.code ?? ended.signal})`);
      if (wasRunning && ended.code === 0 && !aborted) {
        phase = 'checking the stopped store';
        const { failures, ...counts } = checkStoreOffline(storeDir);
        report.storeCheck = counts;
        for (const f of failures) fail(f);
      }
    } catch (e) {
      fail((e as Error).message); // still there 15 s after SIGKILL
    }
    clearTimeout(watchdog);
    fs.rmSync(storeDir, { recursive: true, force: true });
  }
  if (report.failures.length > 0 && opts.artifactDir) {
    fs.mkdirSync(opts.artifactDir, { recursive: true });
    fs.writeFileSync(path.join(opts.artifactDir, `fuzz-failure-${opts.seed}.txt`), `seed ${opts.seed}\n\n${report.failures.join('\n\n')}\n`);
  }
  return report;
}
