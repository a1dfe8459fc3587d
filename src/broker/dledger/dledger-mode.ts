// DLedger mode's parts of the broker, built in one place for the composition root (broker-controller.ts): the
// group member (node over its store), the commit log over it, and the role-change handler.
import path from 'node:path';
import type { BrokerConfig } from '../../common/config.js';
import { parseDLedgerPeers } from '../../common/config-dledger.js';
import type { Logger } from '../../common/logger.js';
import { dledgerCommitLogFactory } from '../../ha/dledger/dledger-commit-log.js';
import { DLedgerNode } from '../../ha/dledger/node.js';
import { dledgerNodeConfigOf } from '../../ha/dledger/node-config.js';
import { splitAddress } from '../../ha/dledger/peer-rpc.js';
import { DLedgerFileStore } from '../../ha/dledger/store/index.js';
import type { DLedgerNodeConfig, DLedgerNodePort } from '../../ha/dledger/types.js';
import type { CommitLogFactory } from '../../store/index.js';

/** Builds a member (its store inside) from the node config; tests hand in their own. */
export type DLedgerNodeFactory = (config: DLedgerNodeConfig, logger: Logger) => DLedgerNodePort;

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|::1|\[::1\])$/;

/**
 * The peer port binds where the official node binds it (0.0.0.0, DLedgerRpcNettyService) unless this member's own
 * dLegerPeers entry names a loopback address: then only there (a group on one machine exposes nothing).
 */
export function peerBindHost(config: DLedgerNodeConfig): string {
  const self = parseDLedgerPeers(config.peers).find((p) => p.id === config.selfId);
  const host = self ? splitAddress(self.addr).host : '';
  if (!LOOPBACK.test(host)) return '0.0.0.0';
  return host === 'localhost' ? '127.0.0.1' : host.replace(/^\[|\]$/g, '');
}

/** Ours over files an official member reads: `{storePathRootDir}/dledger-{selfId}/` (DLedgerConfig.getDefaultPath). */
export const defaultDLedgerNodeFactory: DLedgerNodeFactory = (config, logger) => {
  const store = new DLedgerFileStore({
    baseDir: path.join(config.storeBaseDir, `dledger-${config.selfId}`),
    dataDir: config.dataStorePath,
    dataFileBytes: config.mappedFileSizeForEntryDataBytes,
  }, logger.child({ component: 'dledger-store' }));
  return new DLedgerNode(config, store, logger, { bindHost: peerBindHost(config) });
};

export interface DLedgerParts {
  node: DLedgerNodePort;
  commitLogFactory: CommitLogFactory;
}

export function createDLedgerParts(config: BrokerConfig, logger: Logger, factory: DLedgerNodeFactory = defaultDLedgerNodeFactory): DLedgerParts {
  const node = factory(dledgerNodeConfigOf(config), logger.child({ component: 'dledger' }));
  return { node, commitLogFactory: dledgerCommitLogFactory({ node, semantics: config.haSemantics }) };
}
