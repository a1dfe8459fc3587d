// Broker-wide admin: GET_BROKER_RUNTIME_INFO (28), GET_BROKER_CONFIG (26), UPDATE_BROKER_CONFIG (25).
// Java: broker/processor/AdminBrokerProcessor.java (prepareRuntimeInfo), store/StoreStatsService.getRuntimeInfo,
// store/DefaultMessageStore.getRuntimeInfo, common/Configuration.java.
import fs from 'node:fs';
import path from 'node:path';
import { BROKER_SCHEMA, parseProperties } from '../../common/config.js';
import { stringifyFastjson } from '../../common/fastjson.js';
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { SERVER_VERSION, SERVER_VERSION_DESC } from '../../common/version.js';
import { type RemotingCommand, createResponse } from '../../remoting/command.js';
import type { ProcessorTable } from '../../remoting/dispatcher.js';
import type { BrokerContext } from '../context.js';
import { type DataVersion, bumpDataVersion, newDataVersion } from '../data-version.js';
import { updateRuntimeConfig } from '../runtime-config.js';
import { SystemTopic } from '../topic/topic-config.js';

/** A Java double's String.valueOf for the values we produce (integral → `x.0`). */
function javaDouble(n: number): string {
  return Number.isInteger(n) ? n.toFixed(1) : String(n);
}

/** Java MixAll.humanReadableByteCount(bytes, si=false). */
export function humanReadableByteCount(bytes: number): string {
  const unit = 1024;
  if (bytes < unit) return `${bytes} B`;
  const exp = Math.floor(Math.log(bytes) / Math.log(unit));
  return `${(bytes / unit ** exp).toFixed(1)} ${'KMGTPE'[exp - 1]}iB`;
}

/** Java StoreStatsService.getFormatRuntime. */
export function formatRuntime(ms: number): string {
  const s = Math.floor(ms / 1000);
  return `[ ${Math.floor(s / 86400)} days, ${Math.floor((s % 86400) / 3600)} hours, ${Math.floor((s % 3600) / 60)} minutes, ${s % 60} seconds ]`;
}

interface DiskUsage {
  ratio: number;
  totalBytes: number;
  freeBytes: number;
}

/** Java UtilAll.getDiskPartitionSpaceUsedPercent: used / (used + usable), rounded up to 1 %; -1 if unknown. */
export async function diskUsage(dir: string): Promise<DiskUsage> {
  try {
    const st = await fs.promises.statfs(dir);
    const total = st.blocks * st.bsize;
    const free = st.bfree * st.bsize;
    const usable = st.bavail * st.bsize;
    const used = total - free;
    if (total <= 0 || used + usable <= 0) return { ratio: -1, totalBytes: total, freeBytes: free };
    const pct = Math.ceil((used * 100) / (used + usable));
    return { ratio: pct / 100, totalBytes: total, freeBytes: free };
  } catch {
    return { ratio: -1, totalBytes: 0, freeBytes: 0 };
  }
}

const SAMPLE_WINDOW = 601; // 10 min of 1 s samples, like Java's StoreStatsService

/**
 * Per-second samples of the put/get counters (for putTps and friends: 10 s, 1 min, 10 min windows) and the daily
 * "morning" snapshots behind msgPutTotalTodayMorning etc. (Java BrokerStats.record at midnight).
 */
export class RuntimeStats {
  private readonly times = new Float64Array(SAMPLE_WINDOW);
  private readonly puts = new Float64Array(SAMPLE_WINDOW);
  private readonly gets = new Float64Array(SAMPLE_WINDOW);
  private count = 0;
  private next = 0;
  private day: string;
  putTodayMorning = 0;
  putYesterdayMorning = 0;
  getTodayMorning = 0;
  getYesterdayMorning = 0;

  constructor(private readonly ctx: BrokerContext) {
    this.day = new Date().toDateString();
    this.sample();
    setInterval(() => this.sample(), 1000).unref();
  }

  private sample(): void {
    const now = Date.now();
    const day = new Date(now).toDateString();
    const { msgPutTotal, msgGetTotal } = this.ctx.stats;
    if (day !== this.day) {
      this.day = day;
      this.putYesterdayMorning = this.putTodayMorning;
      this.getYesterdayMorning = this.getTodayMorning;
      this.putTodayMorning = msgPutTotal;
      this.getTodayMorning = msgGetTotal;
    }
    this.times[this.next] = now;
    this.puts[this.next] = msgPutTotal;
    this.gets[this.next] = msgGetTotal;
    this.next = (this.next + 1) % SAMPLE_WINDOW;
    if (this.count < SAMPLE_WINDOW) this.count++;
  }

  /** Rates over the last `seconds` (or what we have), as Java's "10s 1min 10min" triple. */
  tps(which: 'put' | 'get'): string {
    const series = which === 'put' ? this.puts : this.gets;
    const current = which === 'put' ? this.ctx.stats.msgPutTotal : this.ctx.stats.msgGetTotal;
    const now = Date.now();
    const parts: string[] = [];
    for (const seconds of [10, 60, 600]) {
      const back = Math.min(seconds, this.count - 1);
      if (back <= 0) {
        parts.push('0.0');
        continue;
      }
      const idx = (this.next - 1 - back + SAMPLE_WINDOW * 2) % SAMPLE_WINDOW;
      const dt = (now - this.times[idx]) / 1000;
      const rate = dt > 0 ? (current - series[idx]) / dt : 0;
      parts.push(javaDouble(Math.round(Math.max(0, rate) * 100) / 100));
    }
    return parts.join(' ');
  }
}

interface AdminBrokerState {
  stats: RuntimeStats;
  configVersion: DataVersion;
}

function commitLogDir(ctx: BrokerContext): string {
  return ctx.config.storePathCommitLog || path.join(ctx.config.storePathRootDir, 'commitlog');
}

/** The first of the candidates that exists (the commit-log directory may not be created yet). */
function existingDir(...candidates: string[]): string {
  for (const c of candidates) if (fs.existsSync(c)) return c;
  return candidates[candidates.length - 1];
}

export async function buildRuntimeInfo(ctx: BrokerContext, stats: RuntimeStats): Promise<Record<string, string>> {
  const { config, store } = ctx;
  const now = Date.now();
  const clDir = existingDir(commitLogDir(ctx), config.storePathRootDir);
  const cqDir = existingDir(path.join(config.storePathRootDir, 'consumequeue'), config.storePathRootDir);
  const [clDisk, cqDisk, rootDisk, earliest] = await Promise.all([
    diskUsage(clDir),
    diskUsage(cqDir),
    diskUsage(config.storePathRootDir),
    ctx.store.getCommitLogEarliestTime().catch(() => -1),
  ]);
  const putTotal = ctx.stats.msgPutTotal;
  const getTotal = ctx.stats.msgGetTotal;
  const t: Record<string, string> = {
    // StoreStatsService
    bootTimestamp: String(ctx.startTimeMs),
    runtime: formatRuntime(now - ctx.startTimeMs),
    putMessageEntireTimeMax: '0',
    putMessageTimesTotal: String(Math.max(1, putTotal)),
    putMessageFailedTimes: '0',
    putMessageSizeTotal: '0',
    putMessageAverageSize: '0.0',
    dispatchMaxBuffer: '0',
    getMessageEntireTimeMax: '0',
    putTps: stats.tps('put'),
    getFoundTps: stats.tps('get'),
    getMissTps: '0.0 0.0 0.0',
    getTotalTps: stats.tps('get'),
    getTransferredTps: stats.tps('get'),
    // 4.9.x spells it this way (StoreStatsService); 4.9.x mqadmin clusterList fails with an NPE without it.
    getTransferedTps: stats.tps('get'),
    putLatency99: '0.00',
    putLatency999: '0.00',
    // DefaultMessageStore
    commitLogDiskRatio: javaDouble(clDisk.ratio),
    [`commitLogDiskRatio_${commitLogDir(ctx)}`]: javaDouble(clDisk.ratio),
    consumeQueueDiskRatio: javaDouble(cqDisk.ratio),
    commitLogMinOffset: String(store.getMinPhyOffset()),
    commitLogMaxOffset: String(store.getMaxPhyOffset()),
    // AdminBrokerProcessor.prepareRuntimeInfo
    brokerActive: String(config.brokerRole !== 'SLAVE'),
    brokerVersionDesc: SERVER_VERSION_DESC,
    brokerVersion: String(SERVER_VERSION),
    msgPutTotalYesterdayMorning: String(stats.putYesterdayMorning),
    msgPutTotalTodayMorning: String(stats.putTodayMorning),
    msgPutTotalTodayNow: String(putTotal),
    msgGetTotalYesterdayMorning: String(stats.getYesterdayMorning),
    msgGetTotalTodayMorning: String(stats.getTodayMorning),
    msgGetTotalTodayNow: String(getTotal),
    dispatchBehindBytes: '0',
    pageCacheLockTimeMills: '0',
    earliestMessageTimeStamp: String(earliest),
    startAcceptSendRequestTimeStamp: '0',
    timerReadBehind: '0',
    timerOffsetBehind: '0',
    timerCongestNum: '0',
    timerEnqueueTps: '0.0',
    timerDequeueTps: '0.0',
    remainTransientStoreBufferNumbs: '2147483647',
    remainHowManyDataToFlush: '0 B',
    commitLogDirCapacity: `Total : ${humanReadableByteCount(rootDisk.totalBytes)}, Free : ${humanReadableByteCount(rootDisk.freeBytes)}.`,
    // Java's thread-pool queues; requests here run on the event loop, so nothing ever waits in a queue.
    sendThreadPoolQueueSize: '0',
    sendThreadPoolQueueCapacity: '10000',
    pullThreadPoolQueueSize: '0',
    pullThreadPoolQueueCapacity: '100000',
    litePullThreadPoolQueueSize: '0',
    litePullThreadPoolQueueCapacity: '100000',
    queryThreadPoolQueueSize: '0',
    queryThreadPoolQueueCapacity: '20000',
    ackThreadPoolQueueSize: '0',
    ackThreadPoolQueueCapacity: '100000',
    sendThreadPoolQueueHeadWaitTimeMills: '0',
    pullThreadPoolQueueHeadWaitTimeMills: '0',
    queryThreadPoolQueueHeadWaitTimeMills: '0',
    litePullThreadPoolQueueHeadWaitTimeMills: '0',
    ackThreadPoolQueueHeadWaitTimeMills: '0',
    EndTransactionQueueSize: '0',
    EndTransactionThreadPoolQueueCapacity: '100000',
  };
  // ScheduleMessageService.buildRunningStats: per delay level "<delivered offset>,<max offset>".
  const schedule = ctx.scheduleMessageService as BrokerContext['scheduleMessageService'] | undefined;
  for (const [level, delayOffset] of schedule?.offsetTable() ?? []) {
    t[`scheduleMessageOffset_${level}`] = `${delayOffset},${store.getMaxOffsetInQueue(SystemTopic.SCHEDULE_TOPIC, level - 1)}`;
  }
  return t;
}

/** Java MixAll.properties2String: `key=value\n` per key. */
export function configToProperties(config: Record<string, unknown>): string {
  let out = '';
  for (const key of Object.keys(BROKER_SCHEMA)) {
    const v = config[key];
    if (v !== undefined && v !== null) out += `${key}=${String(v)}\n`;
  }
  for (const [key, v] of Object.entries(FIXED_REPORTED_CONFIG)) {
    if (!Object.hasOwn(BROKER_SCHEMA, key)) out += `${key}=${String(config[key] ?? v)}\n`;
  }
  return out;
}

/**
 * Java BrokerConfig keys we have no setting for, shown with the value that describes this broker (all Java
 * defaults): mqadmin exportConfigs copies them into java.util.Properties and fails on a missing one.
 */
export const FIXED_REPORTED_CONFIG: Readonly<Record<string, string>> = {
  filterServerNums: '0',
  useTLS: 'false',
};

/** The config as GET_BROKER_CONFIG shows it: `listenPort=0` (pick a free port) reads as the port actually bound. */
function reportedConfig(ctx: BrokerContext): Record<string, unknown> {
  const config: Record<string, unknown> = { ...FIXED_REPORTED_CONFIG, ...(ctx.config as Record<string, unknown>) };
  if (ctx.config.listenPort === 0) {
    const addr = ctx.brokerAddr();
    config.listenPort = Number(addr.slice(addr.lastIndexOf(':') + 1));
  }
  return config;
}

function dataVersionJson(v: DataVersion): string {
  return stringifyFastjson({ counter: v.counter, stateVersion: v.stateVersion, timestamp: v.timestamp });
}

async function updateBrokerConfig(ctx: BrokerContext, state: AdminBrokerState, req: RemotingCommand): Promise<RemotingCommand> {
  if (!req.body || req.body.length === 0) return createResponse(ResponseCode.SUCCESS); // Java: nothing to do
  const settings = parseProperties(req.body.toString('utf8'));
  const outcome = updateRuntimeConfig(ctx, settings);
  switch (outcome.status) {
    case 'BLACK_LISTED':
      return createResponse(ResponseCode.NO_PERMISSION, 'Can not update config in black list.');
    case 'RESTART_ONLY':
      return createResponse(
        ResponseCode.INVALID_PARAMETER,
        `${outcome.keys.join(', ')} cannot be changed on a running broker; edit broker.conf and restart`,
      );
    case 'INVALID':
      return createResponse(ResponseCode.INVALID_PARAMETER, `invalid broker config value: ${outcome.message}`);
    case 'UPDATED':
      break;
  }
  bumpDataVersion(state.configVersion);
  if (Object.hasOwn(settings, 'brokerPermission')) {
    // Java: the nameservers must learn the new permission now (route perm is ANDed with it).
    bumpDataVersion(ctx.topicConfigManager.dataVersion);
    try {
      await ctx.registerBrokerAll();
    } catch (err) {
      ctx.logger.warn({ err }, 'registering with nameservers after brokerPermission change failed');
    }
  }
  return createResponse(ResponseCode.SUCCESS);
}

export function adminBrokerProcessors(ctx: BrokerContext): ProcessorTable {
  const state: AdminBrokerState = { stats: new RuntimeStats(ctx), configVersion: newDataVersion() };
  return [
    [RequestCode.GET_BROKER_RUNTIME_INFO, async () => {
      const table = await buildRuntimeInfo(ctx, state.stats);
      return createResponse(ResponseCode.SUCCESS, undefined, {}, Buffer.from(stringifyFastjson({ table })));
    }],
    [RequestCode.GET_BROKER_CONFIG, () =>
      createResponse(
        ResponseCode.SUCCESS,
        undefined,
        { version: dataVersionJson(state.configVersion) },
        Buffer.from(configToProperties(reportedConfig(ctx))),
      ),
    ],
    [RequestCode.UPDATE_BROKER_CONFIG, (req) => updateBrokerConfig(ctx, state, req)],
  ];
}
