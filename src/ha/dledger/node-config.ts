// The node's configuration from the broker's keys (Java DLedgerCommitLog's constructor fills DLedgerConfig from
// MessageStoreConfig the same way; protocol/dledger.md §5.1, §6). Timing keys keep DLedger 0.3.1.2's defaults.
import type { DLedgerNodeConfig } from './types.js';
import { DLEDGER_NODE_TIMING } from './types.js';

export interface DLedgerBrokerKeys {
  dLegerGroup: string;
  dLegerSelfId: string;
  dLegerPeers: string;
  storePathRootDir: string;
  storePathDLedgerCommitLog: string;
  mappedFileSizeCommitLog: number;
  preferredLeaderId: string;
  enableBatchPush: boolean;
}

export function dledgerNodeConfigOf(c: DLedgerBrokerKeys): DLedgerNodeConfig {
  return {
    group: c.dLegerGroup,
    selfId: c.dLegerSelfId,
    peers: c.dLegerPeers,
    storeBaseDir: c.storePathRootDir,
    dataStorePath: c.storePathDLedgerCommitLog || null,
    mappedFileSizeForEntryDataBytes: c.mappedFileSizeCommitLog,
    // DLedgerConfig.setPreferredLeaderId takes a `;`-separated list
    preferredLeaderIds: c.preferredLeaderId.split(';').map((s) => s.trim()).filter((s) => s !== ''),
    enableBatchPush: c.enableBatchPush,
    ...DLEDGER_NODE_TIMING,
    // ours (types.ts): a follower whose leader's link resets and whose peer port refuses campaigns at once
    fastFailoverOnLeaderReset: true,
  };
}
