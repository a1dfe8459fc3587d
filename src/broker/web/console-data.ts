// What the admin web page shows, as JSON: the cluster as the nameservers see it, this broker's topics with queue
// offsets, consumer groups with per-queue lag and their connected clients, message lookup by id and key, and
// in/out rates. The numbers are the ones mqadmin's clusterList / topicStatus / consumerProgress print.
import { parseFastjson } from '../../common/fastjson.js';
import { RequestCode } from '../../common/request-code.js';
import type { RemotingClient } from '../../remoting/client.js';
import { createRequest } from '../../remoting/command.js';
import { decodeRecord } from '../../store/index.js';
import type { BrokerContext } from '../context.js';
import { decodeOffsetMessageId } from '../message-id.js';

export interface ClusterBroker {
  cluster: string;
  brokerName: string;
  brokerId: number;
  role: string;
  addr: string;
}

/** GET_BROKER_CLUSTER_INFO from the first nameserver that answers. */
export async function clusterView(ctx: BrokerContext, client: RemotingClient): Promise<{ brokers: ClusterBroker[]; namesrv: string; error?: string }> {
  let lastError = 'no nameserver configured';
  for (const ns of ctx.config.namesrvAddr.split(';').filter(Boolean)) {
    try {
      const res = await client.request(ns, createRequest(RequestCode.GET_BROKER_CLUSTER_INFO), 3000);
      if (res.code !== 0 || !res.body) throw new Error(`code ${res.code} ${res.remark ?? ''}`);
      const info = parseFastjson(res.body.toString('utf8')) as {
        brokerAddrTable?: Record<string, { cluster: string; brokerName: string; brokerAddrs: Record<string, string> }>;
      };
      const brokers: ClusterBroker[] = [];
      for (const b of Object.values(info.brokerAddrTable ?? {})) {
        for (const [id, addr] of Object.entries(b.brokerAddrs ?? {})) {
          brokers.push({ cluster: b.cluster, brokerName: b.brokerName, brokerId: Number(id), role: Number(id) === 0 ? 'MASTER' : 'SLAVE', addr });
        }
      }
      brokers.sort((a, b) => a.cluster.localeCompare(b.cluster) || a.brokerName.localeCompare(b.brokerName) || a.brokerId - b.brokerId);
      return { brokers, namesrv: ns };
    } catch (err) {
      lastError = `${ns}: ${(err as Error).message}`;
    }
  }
  return { brokers: [], namesrv: '', error: lastError };
}

export function topicsView(ctx: BrokerContext) {
  const out = [];
  for (const [name, tc] of [...ctx.topicConfigManager.table].sort(([a], [b]) => a.localeCompare(b))) {
    const queues = [];
    for (let q = 0; q < tc.readQueueNums; q++) {
      queues.push({ queueId: q, minOffset: ctx.store.getMinOffsetInQueue(name, q), maxOffset: ctx.store.getMaxOffsetInQueue(name, q) });
    }
    out.push({
      topic: name,
      perm: tc.perm,
      readQueueNums: tc.readQueueNums,
      writeQueueNums: tc.writeQueueNums,
      system: ctx.topicConfigManager.isSystemTopic(name) || name.startsWith('%') || name.startsWith('rmq_sys_'),
      messages: queues.reduce((a, q) => a + (q.maxOffset - q.minOffset), 0),
      queues,
    });
  }
  return out;
}

export function groupsView(ctx: BrokerContext) {
  const byGroup = new Map<string, Array<{ topic: string; queueId: number; brokerOffset: number; consumerOffset: number; lag: number }>>();
  for (const [key, offsets] of ctx.consumerOffsetManager.table) {
    const at = key.indexOf('@');
    const topic = key.slice(0, at);
    const group = key.slice(at + 1);
    const rows = byGroup.get(group) ?? [];
    for (const [queueId, consumerOffset] of [...offsets].sort(([a], [b]) => a - b)) {
      const brokerOffset = ctx.store.getMaxOffsetInQueue(topic, queueId);
      rows.push({ topic, queueId, brokerOffset, consumerOffset, lag: Math.max(0, brokerOffset - consumerOffset) });
    }
    byGroup.set(group, rows);
  }
  for (const g of ctx.consumerManager.groupNames()) if (!byGroup.has(g)) byGroup.set(g, []);
  return [...byGroup]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([group, queues]) => {
      const info = ctx.consumerManager.getConsumerGroupInfo(group);
      const clients = [...(info?.channels.values() ?? [])].map((c) => ({
        clientId: c.clientId,
        addr: c.channel.remoteAddress,
        language: c.language,
        version: c.version,
        protocol: 'remoting',
      }));
      return {
        group,
        messageModel: info?.messageModel ?? '',
        consumeType: info?.consumeType ?? '',
        lag: queues.reduce((a, q) => a + q.lag, 0),
        queues: queues.sort((a, b) => a.topic.localeCompare(b.topic) || a.queueId - b.queueId),
        clients,
      };
    });
}

function describeRecord(buf: Buffer) {
  const r = decodeRecord(buf);
  const props: Record<string, string> = {};
  for (const kv of r.propertiesString.split('\u0002')) {
    const i = kv.indexOf('\u0001');
    if (i > 0) props[kv.slice(0, i)] = kv.slice(i + 1);
  }
  return {
    topic: r.topic,
    queueId: r.queueId,
    queueOffset: r.queueOffset,
    commitLogOffset: r.commitLogOffset,
    storeTimestamp: r.storeTimestamp,
    bornTimestamp: r.bornTimestamp,
    reconsumeTimes: r.reconsumeTimes,
    tags: props.TAGS ?? '',
    keys: props.KEYS ?? '',
    uniqKey: props.UNIQ_KEY ?? '',
    properties: props,
    bodySize: r.body.length,
    // compressed bodies (sysFlag bit 0) are shown as their size only
    body: r.sysFlag & 1 ? '' : r.body.subarray(0, 4096).toString('utf8'),
  };
}

/** By offset message id (what mqadmin queryMsgById takes) or by key / UNIQ_KEY within a topic. */
export async function messageLookup(ctx: BrokerContext, q: { id?: string; topic?: string; key?: string }) {
  if (q.id) {
    const decoded = decodeOffsetMessageId(q.id);
    if (decoded) {
      const buf = await ctx.store.lookMessageByOffset(decoded.commitLogOffset);
      if (buf) return [describeRecord(buf)];
    }
    if (!q.topic) return [];
    // a UNIQ_KEY (client message id): the index has it as a key
    q = { topic: q.topic, key: q.id };
  }
  if (!q.topic || !q.key) return [];
  const res = await ctx.store.queryMessage(q.topic, q.key, 32, 0, Number.MAX_SAFE_INTEGER);
  return res.records.map(describeRecord);
}

/** In/out messages per second, one sample a second for the last 5 minutes. */
export class RateHistory {
  private readonly points: Array<{ t: number; inPerSec: number; outPerSec: number }> = [];
  private last: { t: number; put: number; get: number } | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly ctx: BrokerContext) {}

  start(intervalMs = 1000): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  sample(): void {
    const now = Date.now();
    const { msgPutTotal: put, msgGetTotal: get } = this.ctx.stats;
    if (this.last) {
      const secs = Math.max(0.001, (now - this.last.t) / 1000);
      this.points.push({ t: now, inPerSec: (put - this.last.put) / secs, outPerSec: (get - this.last.get) / secs });
      if (this.points.length > 300) this.points.splice(0, this.points.length - 300);
    }
    this.last = { t: now, put, get };
  }

  view() {
    return { points: this.points, putTotal: this.ctx.stats.msgPutTotal, getTotal: this.ctx.stats.msgGetTotal };
  }
}
