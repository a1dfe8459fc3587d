// Public entry of the nameserver module.
export { type Namesrv, type NamesrvOptions, createNamesrv } from './namesrv.js';
export { RouteInfoManager } from './route-info-manager.js';
export { KvConfigManager, KvConfigLoadError } from './kv-config-manager.js';
export {
  type BrokerData,
  type DataVersion,
  type QueueData,
  type TopicRouteData,
  MASTER_ID,
  NAMESPACE_ORDER_TOPIC_CONFIG,
  PermName,
} from './route-types.js';
