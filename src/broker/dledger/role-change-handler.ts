// What the broker does when its DLedger member changes role (Java B/dledger/DLedgerRoleChangeHandler, 4.9.8 and
// 5.3.3 alike; protocol/dledger.md §5.5): one event at a time, in order, through the broker's one role method.
//   CANDIDATE  → slave, unless it is one already
//   FOLLOWER   → slave (again at every new term, so the nameservers hear of it)
//   LEADER     → once the whole log is committed and dispatched (given up if it stops leading first): queue offsets
//                rebuilt from the consume queues, then SYNC_MASTER with brokerId 0
// A slave registers as brokerId = its member id's digits + 1. Each change registers oneway with every nameserver.
// Nothing happens at start-up: a member that never hears of a role keeps brokerId −1 and its configured role.
import type { BrokerConfig } from '../../common/config.js';
import { followerBrokerIdOf } from '../../common/config-dledger.js';
import type { Logger } from '../../common/logger.js';
import type { DLedgerCommitLog } from '../../ha/dledger/dledger-commit-log.js';
import type { DLedgerRole } from '../../ha/dledger/types.js';
import type { DefaultMessageStore } from '../../store/index.js';
import type { BrokerRoleSwitch } from '../broker-role.js';

export interface DLedgerRoleDeps {
  config: BrokerConfig;
  commitLog: DLedgerCommitLog;
  store: DefaultMessageStore;
  roleSwitch: BrokerRoleSwitch;
  logger: Logger;
}

export class DLedgerRoleChangeHandler {
  /** The events handled so far, one after another; the first waits for open() (the broker's port is bound). */
  private chain: Promise<void>;
  private release!: () => void;
  private stopped = false;
  /** Role changes handled (tests, logs). */
  readonly handled: Array<{ role: DLedgerRole; term: number; succeeded: boolean }> = [];

  constructor(private readonly d: DLedgerRoleDeps) {
    this.chain = new Promise((resolve) => (this.release = resolve));
    d.commitLog.node.onRoleChange((role, term) => this.enqueue(role, term));
  }

  /** Lets queued events run: the broker listens, so a registration names its real address. */
  open(): void {
    this.release();
  }

  private enqueue(role: DLedgerRole, term: number): void {
    this.chain = this.chain
      .then(() => this.handle(role, term))
      .catch((err: unknown) => this.d.logger.error({ err, role, term }, '[MONITOR]Failed handling broker role change'));
  }

  private async handle(role: DLedgerRole, term: number): Promise<void> {
    if (this.stopped) return;
    const { config, commitLog, store, logger } = this.d;
    const startedAt = Date.now();
    logger.info({ term, role, brokerRole: config.brokerRole }, 'Begin handling broker role change');
    let succeeded = true;
    switch (role) {
      case 'CANDIDATE':
        if (config.brokerRole !== 'SLAVE') await this.changeToSlave();
        break;
      case 'FOLLOWER':
        await this.changeToSlave();
        break;
      case 'LEADER':
        succeeded = await commitLog.waitLeaderCaughtUp();
        if (succeeded && !this.stopped) {
          // recoverTopicQueueTable, then take puts: both before anything can come in between
          store.recoverTopicQueueTable();
          commitLog.setMasterReady(true);
          await this.d.roleSwitch.applyRole('SYNC_MASTER', { register: 'oneway', brokerId: 0 });
        }
        break;
    }
    this.handled.push({ role, term, succeeded });
    logger.info({ succeeded, term, role, brokerRole: config.brokerRole, brokerId: config.brokerId, costMs: Date.now() - startedAt },
      'Finish handling broker role change');
  }

  private async changeToSlave(): Promise<void> {
    this.d.commitLog.setMasterReady(false);
    await this.d.roleSwitch.applyRole('SLAVE', { register: 'oneway', brokerId: followerBrokerIdOf(this.d.config.dLegerSelfId) });
  }

  /** Shutdown: a leader still waiting gives up, queued events are dropped. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.release();
    this.d.commitLog.cancelLeaderWaits();
    await this.chain;
  }
}
