// ACL 2.0 wiring (Java BrokerController: AuthConfig, the metadata managers, initAuthenticationUser, the
// authentication and authorization pipelines).
import path from 'node:path';
import { type BrokerConfig, ConfigError } from '../../common/config.js';
import type { Logger } from '../../common/logger.js';
import type { RequestHook } from '../../remoting/dispatcher.js';
import { authHook } from './auth-hook.js';
import { AuthStore } from './auth-store.js';

function codes(key: string, s: string): Set<number> {
  const out = new Set<number>();
  for (const part of s.split(',').map((x) => x.trim()).filter(Boolean)) {
    if (!/^\d+$/.test(part)) throw new ConfigError(`${key}: "${part}" is not a request code`);
    out.add(Number(part));
  }
  return out;
}

export interface AuthSetup {
  store: AuthStore;
  hook: RequestHook;
  /** Loads users and ACLs and creates initAuthenticationUser (a super user) when absent. */
  start(): Promise<void>;
}

export function setupAuth(config: BrokerConfig, logger: Logger): AuthSetup | undefined {
  if (!config.authenticationEnabled && !config.authorizationEnabled) return undefined;
  const dir = config.authConfigPath || path.join(config.storePathRootDir, 'config');
  const store = new AuthStore(dir, logger);
  let initUser: { username: string; password: string } | undefined;
  if (config.initAuthenticationUser) {
    try {
      initUser = JSON.parse(config.initAuthenticationUser) as { username: string; password: string };
    } catch (err) {
      throw new ConfigError(`initAuthenticationUser: not JSON like {"username":"rocketmq","password":"12345678"}: ${(err as Error).message}`);
    }
    if (!initUser?.username || !initUser.password) throw new ConfigError('initAuthenticationUser: needs "username" and "password"');
  }
  const hook = authHook(
    store,
    {
      authenticationEnabled: config.authenticationEnabled,
      authorizationEnabled: config.authorizationEnabled,
      authenticationWhitelist: codes('authenticationWhitelist', config.authenticationWhitelist),
      authorizationWhitelist: codes('authorizationWhitelist', config.authorizationWhitelist),
      clusterName: config.brokerClusterName,
    },
    logger,
  );
  return {
    store,
    hook,
    async start() {
      store.load();
      if (initUser) await store.initUser({ username: initUser.username, password: initUser.password, userType: 'Super', userStatus: 'enable' });
    },
  };
}
