// DLedger mode's parts of the broker, built in one place for the composition root (broker-controller.ts): the
// group member (node over its store), the commit log over it, and the role-change handler.
import type { BrokerConfig } from '../../common/config.js';
import { ConfigError } from '../../common/config.js';
import type { Logger } from '../../common/logger.js';
import { dledgerCommitLogFactory } from '../../ha/dledger/dledger-commit-log.js';
import { dledgerNodeConfigOf } from '../../ha/dledger/node-config.js';
import type { DLedgerNodeConfig, DLedgerNodePort } from '../../ha/dledger/types.js';
import type { CommitLogFactory } from '../../store/index.js';

/** Builds a member (its store inside) from the node config; tests hand in their own. */
export type DLedgerNodeFactory = (config: DLedgerNodeConfig, logger: Logger) => DLedgerNodePort;

export const defaultDLedgerNodeFactory: DLedgerNodeFactory = () => {
  throw new ConfigError('enableDLegerCommitLog: this build has no DLedger node');
};

export interface DLedgerParts {
  node: DLedgerNodePort;
  commitLogFactory: CommitLogFactory;
}

export function createDLedgerParts(config: BrokerConfig, logger: Logger, factory: DLedgerNodeFactory = defaultDLedgerNodeFactory): DLedgerParts {
  const node = factory(dledgerNodeConfigOf(config), logger.child({ component: 'dledger' }));
  return { node, commitLogFactory: dledgerCommitLogFactory({ node, semantics: config.haSemantics }) };
}
