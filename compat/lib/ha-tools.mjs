// Tools the HA scripts share (compat/ha-compat.mjs, compat/ha-faults.mjs, bench/ha.mjs): raw remoting requests
// through dist/ (run `npm run build` first), the stock ali-ons client, waits on conditions, commit-log files.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dist = (p) => import(path.join(ROOT, 'dist', p));
const { RemotingClient } = await dist('remoting/client.js');
const { createRequest } = await dist('remoting/command.js');
const { silentLogger } = await dist('common/logger.js');
const { parseFastjson } = await dist('common/fastjson.js');
export const { decodeRecord, bodyCrc32 } = await dist('store/index.js');
const ons = createRequire(import.meta.url)('ali-ons');
export const { Message } = ons;

export const Code = {
  SEND_MESSAGE: 10, PULL_MESSAGE: 11, QUERY_MESSAGE: 12, QUERY_CONSUMER_OFFSET: 14, UPDATE_CONSUMER_OFFSET: 15,
  UPDATE_AND_CREATE_TOPIC: 17, GET_ALL_TOPIC_CONFIG: 21, GET_BROKER_RUNTIME_INFO: 28, GET_MAX_OFFSET: 30,
  VIEW_MESSAGE_BY_ID: 33, GET_ROUTEINFO_BY_TOPIC: 105, GET_BROKER_CLUSTER_INFO: 106, UPDATE_AND_CREATE_SUBSCRIPTIONGROUP: 200,
  GET_ALL_SUBSCRIPTIONGROUP_CONFIG: 201, GET_BROKER_HA_STATUS: 907,
};

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The largest of xs, at least `floor`; a loop, not Math.max(...xs): a 40 s load records more sends than a call can take arguments. */
export function maxOf(xs, floor = -Infinity) {
  let m = floor;
  for (const x of xs) if (x > m) m = x;
  return m;
}

/** Polls `predicate` until it holds; throws naming `what` after `timeoutMs` (a deadline only bounds a broken server). */
export async function waitFor(predicate, timeoutMs, what, everyMs = 200) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      if (await predicate()) return;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${last.message})` : ''}`);
    await sleep(everyMs);
  }
}

export class Remote {
  constructor() {
    this.client = new RemotingClient(silentLogger());
  }

  request(addr, code, header = {}, body, timeoutMs = 10_000) {
    return this.client.request(addr, createRequest(code, header, body), timeoutMs);
  }

  async json(addr, code, header = {}) {
    const res = await this.request(addr, code, header);
    if (res.code !== 0) throw new Error(`code ${code} at ${addr}: ${res.code} ${res.remark ?? ''}`);
    return parseFastjson(res.body ?? Buffer.alloc(0));
  }

  async runtime(addr) {
    return (await this.json(addr, Code.GET_BROKER_RUNTIME_INFO)).table;
  }

  async maxPhyOffset(addr) {
    return Number((await this.runtime(addr)).commitLogMaxOffset);
  }

  async route(ns, topic) {
    const res = await this.request(ns, Code.GET_ROUTEINFO_BY_TOPIC, { topic });
    return res.code === 0 ? parseFastjson(res.body) : null;
  }

  createTopic(addr, topic, queues = 4) {
    return this.request(addr, Code.UPDATE_AND_CREATE_TOPIC, {
      topic, defaultTopic: 'TBW102', readQueueNums: String(queues), writeQueueNums: String(queues), perm: '6',
      topicFilterType: 'SINGLE_TAG', topicSysFlag: '0', order: 'false',
    });
  }

  pull(addr, topic, queueId, queueOffset, group) {
    return this.request(addr, Code.PULL_MESSAGE, {
      consumerGroup: group, topic, queueId: String(queueId), queueOffset: String(queueOffset), maxMsgNums: '32',
      sysFlag: '4', commitOffset: '0', suspendTimeoutMillis: '0', subscription: '*', subVersion: '0', expressionType: 'TAG',
    });
  }

  /** Every record of a queue from `from`, by pulls (a slave may answer "retry" at its end: that ends the read). */
  async readQueue(addr, topic, queueId, group, from = 0) {
    const out = [];
    let offset = from;
    for (let guard = 0; guard < 100_000; guard++) {
      const res = await this.pull(addr, topic, queueId, offset, group);
      if (res.code !== 0) return { records: out, lastCode: res.code, next: offset };
      const body = res.body ?? Buffer.alloc(0);
      for (let pos = 0; pos < body.length; ) {
        const size = body.readInt32BE(pos);
        out.push(body.subarray(pos, pos + size));
        pos += size;
      }
      offset = Number(res.extFields.nextBeginOffset);
    }
    throw new Error('readQueue: too many pulls');
  }

  close() {
    return this.client.close();
  }
}

const httpclient = { request() { throw new Error('ali-ons tried HTTP name resolution'); } };
const quiet = { info() {}, warn() {}, debug() {}, error() {} };
let seq = 0;

/** A stock ali-ons producer (default settings but the name server and a quiet logger). */
export function producer(nameSrv, producerGroup, extra = {}) {
  const p = new ons.Producer({ httpclient, nameSrv, producerGroup, instanceName: `hp${process.pid}_${++seq}`, logger: quiet, ...extra });
  return ignoreLateErrors(p);
}

/**
 * Route refreshes against a server that is gone (a later row, a killed broker) surface as 'error' events, also
 * after close(), which removes every listener: one is put back.
 */
function ignoreLateErrors(client) {
  client.on('error', () => undefined);
  const close = client.close.bind(client);
  client.close = async () => {
    try {
      await close();
    } catch {
      // unregistering from a broker that is gone fails; the client is closed anyway
    } finally {
      client.on('error', () => undefined);
    }
  };
  return client;
}

/** A stock ali-ons push consumer reading from the first offset. */
export function consumer(nameSrv, consumerGroup, extra = {}) {
  const c = new ons.Consumer({
    httpclient, nameSrv, consumerGroup, instanceName: `hc${process.pid}_${++seq}`, logger: quiet,
    consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET', rebalanceInterval: 1000, ...extra,
  });
  return ignoreLateErrors(c);
}

/** Offset msgId (as official and ours answer sends) → commit-log offset. */
export const phyOffsetOf = (msgId) => Number(BigInt(`0x${msgId.slice(16, 32)}`));

/** Commit-log bytes [from, to) read from the files of a store's commitlog directory. */
export function readCommitLog(dir, fileSize, from, to) {
  const parts = [];
  for (let at = from; at < to; ) {
    const start = at - (at % fileSize);
    const end = Math.min(to, start + fileSize);
    const fd = fs.openSync(path.join(dir, String(start).padStart(20, '0')), 'r');
    try {
      const b = Buffer.alloc(end - at);
      fs.readSync(fd, b, 0, b.length, at - start);
      parts.push(b);
    } finally {
      fs.closeSync(fd);
    }
    at = end;
  }
  return Buffer.concat(parts);
}

/** First offset where the two commit logs differ in [from, to), or -1; compared in 4 MiB steps. */
export function firstDifference(dirA, dirB, fileSize, from, to) {
  const step = 4 * 1024 * 1024;
  for (let at = from; at < to; at += step) {
    const end = Math.min(to, at + step);
    const a = readCommitLog(dirA, fileSize, at, end);
    const b = readCommitLog(dirB, fileSize, at, end);
    if (!a.equals(b)) {
      for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return at + i;
    }
  }
  return -1;
}

/** Deterministic pseudo-random numbers (mulberry32): a seed replays a schedule. */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A TCP proxy that can be paused: while paused it forwards nothing either way (the link stays open, as with a
 * slave stuck behind a congested network). Resolves once listening on 127.0.0.1:port (0 = any).
 */
export async function pausableProxy(targetHost, targetPort, port = 0) {
  const net = await import('node:net');
  const pairs = new Set();
  let paused = false;
  const server = net.createServer((client) => {
    const upstream = net.connect({ host: targetHost, port: targetPort });
    const pair = { client, upstream };
    pairs.add(pair);
    if (paused) {
      client.pause();
      upstream.pause();
    }
    client.pipe(upstream);
    upstream.pipe(client);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const s of [client, upstream]) {
      s.on('close', end);
      s.on('error', end);
    }
  });
  await new Promise((r) => server.listen(port, '127.0.0.1', r));
  return {
    port: server.address().port,
    pause() {
      paused = true;
      for (const { client, upstream } of pairs) {
        client.pause();
        upstream.pause();
      }
    },
    resume() {
      paused = false;
      for (const { client, upstream } of pairs) {
        client.resume();
        upstream.resume();
      }
    },
    /** Stops accepting connections (its port refuses, as a dead process's would); open links stay as they are. */
    refuse() {
      server.close(() => undefined);
    },
    close() {
      for (const { client, upstream } of pairs) {
        client.destroy();
        upstream.destroy();
      }
      return new Promise((r) => server.close(() => r()));
    },
  };
}

/** Bodies (utf8) of every message record in a commit-log directory, read file by file (BLANK ends a file). */
export function bodiesInCommitLog(dir) {
  const out = new Set();
  const names = fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => /^\d{20}$/.test(n)).sort() : [];
  for (const name of names) {
    const buf = fs.readFileSync(path.join(dir, name));
    let pos = 0;
    while (pos + 8 <= buf.length) {
      const size = buf.readInt32BE(pos);
      const magic = buf.readUInt32BE(pos + 4);
      if (size <= 0 || magic === 0xcbd43194 || pos + size > buf.length) break;
      try {
        out.add(decodeRecord(buf.subarray(pos, pos + size)).body.toString('utf8'));
      } catch {
        break; // a torn tail (the process was killed mid-write)
      }
      pos += size;
    }
  }
  return out;
}
