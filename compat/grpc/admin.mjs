// Minimal remoting admin for the gRPC scenarios (raw frames, JSON headers, as mqadmin sends them): create topics
// with a message.type attribute and subscription groups on a broker, wait for a route at the nameserver, read
// offsets and pull a dead-letter queue. Independent of the server's own code. Plain Node >= 20.
import net from 'node:net';

let nextOpaque = 1;

/** One request/response over a fresh connection; resolves { code, remark, extFields, body }. */
export function request(addr, code, extFields = {}, body = undefined, timeoutMs = 10_000) {
  const [host, port] = [addr.slice(0, addr.lastIndexOf(':')), Number(addr.slice(addr.lastIndexOf(':') + 1))];
  const opaque = nextOpaque++;
  const header = Buffer.from(JSON.stringify({
    code, language: 'JAVA', version: 475, opaque, flag: 0, serializeTypeCurrentRPC: 'JSON',
    extFields: Object.fromEntries(Object.entries(extFields).map(([k, v]) => [k, String(v)])),
  }));
  const b = body ?? Buffer.alloc(0);
  const frame = Buffer.alloc(8 + header.length + b.length);
  frame.writeInt32BE(4 + header.length + b.length, 0);
  frame.writeInt32BE(header.length, 4); // serialize type JSON (0) in the high byte
  header.copy(frame, 8);
  b.copy(frame, 8 + header.length);
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host, port });
    let buf = Buffer.alloc(0);
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`request ${code} to ${addr} timed out`));
    }, timeoutMs);
    sock.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    sock.on('connect', () => sock.write(frame));
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length < 4 || buf.length < 4 + buf.readInt32BE(0)) return;
      clearTimeout(timer);
      sock.destroy();
      const len = buf.readInt32BE(0);
      const hlen = buf.readInt32BE(4) & 0xffffff;
      const h = JSON.parse(buf.subarray(8, 8 + hlen).toString());
      resolve({ code: h.code, remark: h.remark, extFields: h.extFields ?? {}, body: buf.subarray(8 + hlen, 4 + len) });
    });
  });
}

/** UPDATE_AND_CREATE_TOPIC with `+message.type=TYPE` (what `mqadmin updateTopic -a +message.type=TYPE` sends). */
export async function createTopic(broker, topic, { queues = 4, type = 'NORMAL' } = {}) {
  const r = await request(broker, 17, {
    topic, defaultTopic: 'TBW102', readQueueNums: queues, writeQueueNums: queues, perm: 6, topicFilterType: 'SINGLE_TAG',
    topicSysFlag: 0, order: false, attributes: `+message.type=${type}`,
  });
  if (r.code !== 0) throw new Error(`create topic ${topic}: ${r.code} ${r.remark}`);
}

/** UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (`mqadmin updateSubGroup -r N [-o true]`). */
export async function createGroup(broker, group, { retryMaxTimes = 16, orderly = false } = {}) {
  const cfg = {
    groupName: group, consumeEnable: true, consumeFromMinEnable: true, consumeBroadcastEnable: true, consumeMessageOrderly: orderly,
    retryQueueNums: 1, retryMaxTimes, brokerId: 0, whichBrokerWhenConsumeSlowly: 1, notifyConsumerIdsChangedEnable: true,
    groupSysFlag: 0, consumeTimeoutMinute: 15,
  };
  const r = await request(broker, 200, {}, Buffer.from(JSON.stringify(cfg)));
  if (r.code !== 0) throw new Error(`create group ${group}: ${r.code} ${r.remark}`);
}

/** Waits until the nameserver has a route for the topic (GET_ROUTEINFO_BY_TOPIC). */
export async function awaitRoute(namesrv, topic, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await request(namesrv, 105, { topic });
    if (r.code === 0) return;
    if (Date.now() > deadline) throw new Error(`no route for ${topic}: ${r.code} ${r.remark}`);
    await new Promise((res) => setTimeout(res, 200));
  }
}

export async function maxOffset(broker, topic, queueId = 0) {
  const r = await request(broker, 30, { topic, queueId });
  return r.code === 0 ? Number(r.extFields.offset) : -1;
}

/** Bodies of a queue from offset 0 (PULL_MESSAGE with an inline `*` subscription). */
export async function pullBodies(broker, topic, queueId = 0) {
  const r = await request(broker, 11, {
    consumerGroup: 'CG_grpc_compat_reader', topic, queueId, queueOffset: 0, maxMsgNums: 32, sysFlag: 4, commitOffset: 0,
    suspendTimeoutMillis: 0, subscription: '*', subVersion: 0, expressionType: 'TAG',
  });
  const out = [];
  if (r.code !== 0) return out;
  const b = r.body;
  for (let pos = 0; pos < b.length;) {
    const total = b.readInt32BE(pos);
    const sysFlag = b.readInt32BE(pos + 36);
    let o = pos + 48 + (sysFlag & 0x10 ? 20 : 8) + 8 + (sysFlag & 0x20 ? 20 : 8) + 4 + 8;
    const bodyLen = b.readInt32BE(o);
    out.push(b.subarray(o + 4, o + 4 + bodyLen).toString());
    pos += total;
  }
  return out;
}
