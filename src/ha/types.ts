// What the HA code needs from the rest of the process: the commit log (CommitLogPort, through the store's one door)
// and the settings it reads live from the broker's config object.
import type { BrokerConfig } from '../common/config.js';
import type { CommitLogPort } from '../store/index.js';

/** The commit log as replication uses it (the local log implements it; CommitLogPort). */
export type ReplicatedLog = Pick<
  CommitLogPort,
  | 'minOffset' | 'writtenOffset' | 'appendOffset' | 'onWrittenOffset' | 'readForReplica' | 'appendReplicated'
  | 'canAccept' | 'setReplicaWait'
>;

/** Settings read at each use, so updateBrokerConfig changes of the live ones take effect at once. */
export type HaConfig = Pick<
  BrokerConfig,
  | 'brokerRole' | 'haSemantics' | 'haSendHeartbeatInterval' | 'haHousekeepingInterval' | 'haTransferBatchSize'
  | 'haSlaveFallbehindMax' | 'haMaxGapNotInSync' | 'inSyncReplicas' | 'slaveTimeout' | 'haOneConnectionPerSlaveHost'
  | 'mappedFileSizeCommitLog' | 'haMasterAddress'
>;
