import fs from 'node:fs';
import type { Logger } from '../common/logger.js';
import { TLS_SCHEMA, createServerTlsContext } from '../remoting/tls.js';
import {
  BROKER_SCHEMA,
  type BrokerConfig,
  ConfigError,
  NAMESRV_SCHEMA,
  type NamesrvConfig,
  applySettings,
  defaults,
  expandHome,
  readPropertiesFile,
} from '../common/config.js';
import { createBroker } from '../broker/broker-controller.js';
import { loadDLedgerMode } from '../broker/dledger/dledger-loader.js';
import { checkDLedgerKeys } from '../common/config-dledger.js';
import { parseMessageDelayLevel } from '../broker/schedule/delay-levels.js';
import { createNamesrv } from '../namesrv/index.js';

export type RunMode = 'start' | 'namesrv' | 'broker';

export interface RunOptions {
  configFile?: string;
  namesrvAddr?: string;
  /** Remaining arguments: `--key=value` settings. */
  extraArgs: string[];
}

export interface Running {
  readyLine: string;
  shutdown(): Promise<void>;
}

/** Turns `--key=value` / `--key value` arguments into settings; anything else is an error naming it. */
export function parseKeyValueArgs(args: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const m = /^--([A-Za-z][\w.]*)(?:=(.*))?$/.exec(a);
    if (!m) throw new ConfigError(`unexpected argument "${a}" (config keys are given as --key=value)`);
    if (m[2] !== undefined) out[m[1]] = m[2];
    else if (i + 1 < args.length && !args[i + 1].startsWith('--')) out[m[1]] = args[++i];
    else out[m[1]] = 'true';
  }
  return out;
}

/**
 * Java TlsHelper: with TLS on, the tls.server.* keys may come from `tls.config.file` (default
 * /etc/rocketmq/tls.properties, read only if it exists); keys set elsewhere win.
 */
function addTlsConfigFile(settings: Record<string, string>): void {
  const mode = settings['tls.server.mode'] ?? TLS_SCHEMA['tls.server.mode'].default;
  if (mode === 'disabled') return;
  const explicit = settings['tls.config.file'];
  const file = expandHome(explicit ?? TLS_SCHEMA['tls.config.file'].default);
  if (explicit === undefined && !fs.existsSync(file)) return;
  let fromFile: Record<string, string>;
  try {
    fromFile = readPropertiesFile(file);
  } catch (err) {
    throw new ConfigError(`tls.config.file: ${(err as Error).message}`);
  }
  for (const [k, v] of Object.entries(fromFile)) if (k.startsWith('tls.server.') && k !== 'tls.server.mode') settings[k] ??= v;
}

/** Builds the configs from (lowest first) defaults, the -c file, -n, then --key=value flags. */
export function buildConfigs(mode: RunMode, opts: RunOptions, logger: Logger): { broker: BrokerConfig; namesrv: NamesrvConfig } {
  const fileSettings = opts.configFile ? readPropertiesFile(opts.configFile) : {};
  const flagSettings = parseKeyValueArgs(opts.extraArgs);
  const namesrvPortFlag = flagSettings.namesrvPort;
  delete flagSettings.namesrvPort;
  if (namesrvPortFlag !== undefined && mode !== 'start') throw new ConfigError('namesrvPort: only `rmq start` takes --namesrvPort');
  const settings: Record<string, string> = { ...fileSettings, ...flagSettings };
  if (opts.namesrvAddr !== undefined) settings.namesrvAddr = opts.namesrvAddr;
  // Java's field name TlsSystemConfig.tlsMode for the tls.server.mode property
  if (settings.tlsMode !== undefined) {
    settings['tls.server.mode'] ??= settings.tlsMode;
    delete settings.tlsMode;
  }
  addTlsConfigFile(settings);

  const broker = defaults(BROKER_SCHEMA);
  const namesrv = defaults(NAMESRV_SCHEMA);
  if (mode === 'namesrv') {
    const unknown = applySettings(NAMESRV_SCHEMA, namesrv, settings);
    if (unknown.length) logger.warn({ keys: unknown }, 'ignoring unknown namesrv config keys');
  } else {
    let unknown = applySettings(BROKER_SCHEMA, broker, settings);
    if (mode === 'start') {
      // The embedded nameserver's own keys (kvConfigPath, scanNotActiveBrokerInterval, ...) go to it.
      const namesrvOnly = Object.fromEntries(unknown.filter((k) => k in NAMESRV_SCHEMA).map((k) => [k, settings[k]!]));
      applySettings(NAMESRV_SCHEMA, namesrv, namesrvOnly);
      unknown = unknown.filter((k) => !(k in namesrvOnly));
    }
    if (unknown.length) logger.warn({ keys: unknown }, 'ignoring unknown broker config keys');
    if (mode === 'start') {
      if (namesrvPortFlag !== undefined) applySettings(NAMESRV_SCHEMA, namesrv, { listenPort: namesrvPortFlag });
      // one process, one TLS setting: the embedded nameserver serves like the broker, and the broker registers with
      // it over TLS when it refuses plain peers
      const tlsSettings = Object.fromEntries(Object.entries(settings).filter(([k]) => k.startsWith('tls.server.')));
      applySettings(NAMESRV_SCHEMA, namesrv, tlsSettings);
      if (namesrv['tls.server.mode'] === 'enforcing' && settings['tls.enable'] === undefined) broker['tls.enable'] = true;
      if (!broker.namesrvAddr) broker.namesrvAddr = `127.0.0.1:${namesrv.listenPort}`;
    }
    parseMessageDelayLevel(broker.messageDelayLevel); // a bad ladder is a config error (exit 2), found before anything starts
    broker.storePathRootDir = expandHome(broker.storePathRootDir);
    if (broker.storePathCommitLog) broker.storePathCommitLog = expandHome(broker.storePathCommitLog);
    if (broker.storePathDLedgerCommitLog) broker.storePathDLedgerCommitLog = expandHome(broker.storePathDLedgerCommitLog);
    checkDLedgerKeys(broker);
    if (mode === 'broker' && !broker.namesrvAddr) {
      broker.namesrvAddr = process.env.NAMESRV_ADDR ?? '';
      if (!broker.namesrvAddr) throw new ConfigError('namesrvAddr: no nameserver address (use -n ADDR, --namesrvAddr=ADDR or NAMESRV_ADDR)');
    }
  }
  namesrv.kvConfigPath = expandHome(namesrv.kvConfigPath);
  // A TLS key or certificate that cannot be read is a config error found before anything starts (exit 2, one line).
  for (const c of mode === 'namesrv' ? [namesrv] : mode === 'broker' ? [broker] : [namesrv, broker]) {
    if (c['tls.server.mode'] !== 'disabled') createServerTlsContext(c);
  }
  return { broker, namesrv };
}

export async function runCommand(mode: RunMode, opts: RunOptions, logger: Logger): Promise<Running> {
  const { broker: brokerConfig, namesrv: namesrvConfig } = buildConfigs(mode, opts, logger);
  const parts: string[] = [];
  const stops: Array<() => Promise<void>> = [];
  if (mode === 'start' || mode === 'namesrv') {
    const namesrv = createNamesrv(namesrvConfig, logger);
    const port = await namesrv.start();
    if (mode === 'start' && namesrvConfig.listenPort === 0) brokerConfig.namesrvAddr = `127.0.0.1:${port}`;
    parts.push(`namesrv 127.0.0.1:${port}`);
    stops.push(() => namesrv.shutdown());
  }
  if (mode === 'start' || mode === 'broker') {
    await loadDLedgerMode(brokerConfig);
    const broker = createBroker(brokerConfig, logger);
    try {
      await broker.start();
    } catch (err) {
      for (const stop of stops.reverse()) await stop();
      throw err;
    }
    parts.push(`broker ${broker.brokerAddr()} (${brokerConfig.brokerName}, cluster ${brokerConfig.brokerClusterName}, namesrv ${brokerConfig.namesrvAddr})`);
    if (broker.grpcPort >= 0) parts.push(`grpc ${brokerConfig.brokerIP1}:${broker.grpcPort}`);
    parts.push(`store ${brokerConfig.storePathRootDir}`);
    stops.unshift(() => broker.shutdown());
  }
  return {
    readyLine: `rocketmq-ts ready: ${parts.join(', ')}`,
    shutdown: async () => {
      for (const stop of stops) await stop();
    },
  };
}
