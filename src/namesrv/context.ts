import type { Logger } from 'pino';
import type { NamesrvConfig } from '../common/config.js';
import type { Processor } from '../remoting/server.js';
import type { KvConfigManager } from './kv-config-manager.js';
import type { RouteInfoManager } from './route-info-manager.js';

/** What the nameserver's processors may reach: config, route tables, KV config. Nothing else. */
export interface NamesrvContext {
  config: NamesrvConfig;
  routes: RouteInfoManager;
  kv: KvConfigManager;
  logger: Logger;
}

/** A request family: request code → processor. */
export type ProcessorTable = ReadonlyArray<readonly [code: number, processor: Processor]>;
