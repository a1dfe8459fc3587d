import type { Logger } from 'pino';
import type { NamesrvConfig } from '../common/config.js';
import type { KvConfigManager } from './kv-config-manager.js';
import type { RouteInfoManager } from './route-info-manager.js';

/** What the nameserver's processors may reach: config, route tables, KV config. Nothing else. */
export interface NamesrvContext {
  config: NamesrvConfig;
  routes: RouteInfoManager;
  kv: KvConfigManager;
  logger: Logger;
}

export type { ProcessorTable } from '../remoting/dispatcher.js';
