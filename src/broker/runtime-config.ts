// Config changes on a running broker (UPDATE_BROKER_CONFIG, mqadmin updateBrokerConfig). Java applies every
// key to the config objects and persists them for the next start (common/Configuration.update); here a key either
// takes effect at once where it is used (`live` in the schema: the broker reads its config object, the store is
// told through updateConfig) or is refused with a remark naming it. Nothing changes unless everything can.
import { BROKER_SCHEMA, type BrokerConfig, ConfigError, applySettings, restartOnlyChanges } from '../common/config.js';
import type { Logger } from '../common/logger.js';
import { STORE_SCHEMA, type MessageStore } from '../store/index.js';

/** Keys Java refuses to change remotely (AdminBrokerProcessor.configBlackList + BrokerConfig.configBlackList). */
export const CONFIG_BLACK_LIST: readonly string[] = ['brokerConfigPath', 'rocketmqHome', 'configBlackList'];

export type ConfigUpdateOutcome =
  | { status: 'UPDATED'; changed: Partial<BrokerConfig>; ignoredUnknownKeys: string[] }
  /** Java: NO_PERMISSION "Can not update config in black list." */
  | { status: 'BLACK_LISTED'; keys: string[] }
  /** Keys read only at start, asked to take another value. */
  | { status: 'RESTART_ONLY'; keys: string[] }
  | { status: 'INVALID'; message: string };

export interface RuntimeConfigTarget {
  config: BrokerConfig;
  store: MessageStore;
  logger: Logger;
}

/** Validates `settings` (properties text, parsed) and applies them to the broker and the store, or to neither. */
export function updateRuntimeConfig(target: RuntimeConfigTarget, settings: Readonly<Record<string, string>>): ConfigUpdateOutcome {
  const blackListed = Object.keys(settings).filter((k) => CONFIG_BLACK_LIST.includes(k));
  if (blackListed.length > 0) return { status: 'BLACK_LISTED', keys: blackListed };

  const candidate = { ...target.config };
  let ignoredUnknownKeys: string[];
  try {
    ignoredUnknownKeys = applySettings(BROKER_SCHEMA, candidate, { ...settings });
  } catch (err) {
    if (err instanceof ConfigError) return { status: 'INVALID', message: err.message };
    throw err;
  }
  const current = target.config as Readonly<Record<string, unknown>>;
  const next = candidate as Readonly<Record<string, unknown>>;
  const changed: Record<string, unknown> = {};
  for (const key of Object.keys(settings)) if (Object.hasOwn(BROKER_SCHEMA, key) && next[key] !== current[key]) changed[key] = next[key];

  const restartOnly = restartOnlyChanges(BROKER_SCHEMA, current, changed);
  if (restartOnly.length > 0) return { status: 'RESTART_ONLY', keys: restartOnly };

  const storeChanges = Object.fromEntries(Object.entries(changed).filter(([k]) => Object.hasOwn(STORE_SCHEMA, k)));
  if (Object.keys(storeChanges).length > 0) {
    try {
      target.store.updateConfig(storeChanges);
    } catch (err) {
      if (err instanceof ConfigError) return { status: 'INVALID', message: err.message };
      throw err;
    }
  }
  Object.assign(target.config, changed);
  target.logger.info({ settings, changed, ignoredUnknownKeys }, 'broker config updated');
  return { status: 'UPDATED', changed: changed as Partial<BrokerConfig>, ignoredUnknownKeys };
}
