// A pull that names a subscription version no heartbeat brought: the broker asks the consumer itself.
//
// A stock 5.x push consumer bumps a topic's subscription version when a rebalance changes its queues and then
// heartbeats under a tryLock (RebalancePushImpl.messageQueueChanged → sendHeartbeatToAllBrokerWithLockV2). Its
// first rebalance runs 1 s after the client instance was made (RebalanceService.minInterval) and its scheduled
// heartbeat starts 1 s after the client started: when that one holds the lock with data built before the bump, the
// bump's heartbeat is skipped ("lock heartBeat, but failed" in the client log) and every pull of that topic gets
// SUBSCRIPTION_NOT_LATEST until the next scheduled heartbeat, 30 s later (apache/rocketmq#3434; the official
// broker alike). Seen here in 1 to 7 of the ~45 push-consumer starts of a compat run (Java client 5.5.0).
//
// After the short wait for a heartbeat (subscription-version-waits.ts) the broker asks that consumer, on the
// connection the pull came on, for its running info (GET_CONSUMER_RUNNING_INFO, what `mqadmin consumerStatus`
// shows: the client answers from the same subscription objects the bump changed) and takes the newer version when
// the expression is the one it holds, which is all a rebalance changes. Anything else (another expression, no
// answer, an older version) leaves the pull to SUBSCRIPTION_NOT_LATEST as before.
import { parseFastjson } from '../../common/fastjson.js';
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import type { ClientChannel } from '../../remoting/dispatcher.js';
import { MIN_CALLABLE_CLIENT_VERSION, callClient } from '../client/broker-to-client.js';
import type { ConsumerManager } from '../client/consumer-manager.js';
import type { SubscriptionData } from '../client/types.js';
import { asObject, decodeSubscriptionData, field } from '../processors/client-manage.js';

/** How long the broker waits for the consumer's running info. */
export const REFRESH_TIMEOUT_MS = 3_000;
/** After an ask that brought nothing, the same connection and group are not asked again for this long. */
export const REFRESH_BACKOFF_MS = 5_000;

interface GroupAsk {
  inFlight?: Promise<SubscriptionData[] | undefined>;
  /** When the last ask that brought nothing ended. */
  lastEmptyMs?: number;
}

/** Per connection: the asks of each group. Weak, so the state goes with the connection. */
const asks = new WeakMap<ClientChannel, Map<string, GroupAsk>>();
/** Connections that let an ask time out (ali-ons answers no broker request): never asked again. */
const silent = new WeakSet<ClientChannel>();

/** The subscriptions in a ConsumerRunningInfo body (fastjson: MessageQueue objects as map keys elsewhere in it). */
export function runningInfoSubscriptions(body: Buffer): SubscriptionData[] {
  const info = asObject(parseFastjson(body), 'ConsumerRunningInfo');
  const set = field(info, 'subscriptionSet');
  if (!Array.isArray(set)) return [];
  return set.map((s, i) => decodeSubscriptionData(s, `subscriptionSet[${i}]`));
}

async function askSubscriptions(channel: ClientChannel, group: string, clientId: string, timeoutMs: number): Promise<SubscriptionData[] | undefined> {
  try {
    const res = await callClient(
      channel, RequestCode.GET_CONSUMER_RUNNING_INFO, { consumerGroup: group, clientId, jstackEnable: 'false' }, undefined, timeoutMs,
    );
    if (res.code !== ResponseCode.SUCCESS || !res.body) return undefined;
    return runningInfoSubscriptions(res.body);
  } catch (err) {
    if (/timed out/.test((err as Error).message)) silent.add(channel);
    return undefined;
  }
}

/**
 * The group's subscription of `topic` at `subVersion` or newer, taken from what the consumer on `channel` reports;
 * undefined when it cannot be had (see the head of this file). Asks of one connection and group are shared.
 */
export async function refreshSubscriptionFromClient(
  consumers: ConsumerManager,
  group: string,
  topic: string,
  subVersion: number,
  channel: ClientChannel,
  opts: { timeoutMs?: number; backoffMs?: number; now?: () => number } = {},
): Promise<SubscriptionData | undefined> {
  const now = opts.now ?? Date.now;
  const member = consumers.memberOnChannel(group, channel);
  if (!member || member.version < MIN_CALLABLE_CLIENT_VERSION || channel.isClosed || silent.has(channel)) return undefined;
  let byGroup = asks.get(channel);
  if (!byGroup) {
    byGroup = new Map();
    asks.set(channel, byGroup);
  }
  let ask = byGroup.get(group);
  if (!ask) {
    ask = {};
    byGroup.set(group, ask);
  }
  if (!ask.inFlight) {
    if (ask.lastEmptyMs !== undefined && now() - ask.lastEmptyMs < (opts.backoffMs ?? REFRESH_BACKOFF_MS)) return undefined;
    const current = ask;
    current.inFlight = askSubscriptions(channel, group, member.clientId, opts.timeoutMs ?? REFRESH_TIMEOUT_MS).finally(() => {
      current.inFlight = undefined;
    });
  }
  const reported = (await ask.inFlight)?.find((s) => s.topic === topic);
  const taken = reported && reported.subVersion >= subVersion ? consumers.adoptSubscriptionVersion(group, channel, reported) : undefined;
  // Another pull sharing the ask may have taken it already.
  const held = taken ?? consumers.findSubscriptionData(group, topic);
  if (held && held.subVersion >= subVersion) {
    ask.lastEmptyMs = undefined;
    return held;
  }
  ask.lastEmptyMs = now();
  return undefined;
}
