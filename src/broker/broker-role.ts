// The broker's role (ASYNC_MASTER, SYNC_MASTER, SLAVE) changes in one place: applyRole starts and stops what the
// role runs and re-registers with the nameservers. Start-up goes through it, and so does every DLedger role change
// (broker/dledger/role-change-handler.ts).
// What each role runs (Java BrokerController.startProcessorByHa / changeSpecialServiceStatus, DefaultMessageStore
// handleScheduleMessageService):
//   master  delay-level delivery, timer dequeue (timerWheelEnable), transaction check-back; SYNC_MASTER also the
//           replica stage of every put (HaService.setSyncMaster)
//   slave   the HA client (copies the master's log) and the metadata sync
// Both listen on the HA port. What a role refuses is role-gate.ts.
import { ConfigError, type BrokerConfig } from '../common/config.js';
import { checkDLedgerKeys } from '../common/config-dledger.js';
import type { Logger } from '../common/logger.js';
import type { HaClient } from '../ha/ha-client.js';
import type { HaService } from '../ha/ha-service.js';
import type { DefaultMessageStore } from '../store/index.js';
import type { ScheduleMessageService } from './schedule/schedule-message-service.js';
import type { SlaveSynchronize } from './slave/slave-synchronize.js';
import type { TimerMessageService } from './timer/timer-message-service.js';
import type { TransactionCheckService } from './transaction/transaction-check-service.js';

export type BrokerRole = BrokerConfig['brokerRole'];

/**
 * Java BrokerStartup's checks and adjustments of a role read from the config: a slave needs a brokerId > 0,
 * masters are id 0; a 5.3.3 slave counts 10 points less of RAM as "in memory" (accessMessageInMemoryMaxRatio).
 * DLedger mode (after the same checks): the DLedger keys must agree, and the broker starts as brokerId −1 whatever
 * its role says, until the first role change gives it 0 or its follower id.
 */
export function prepareRoleConfig(config: BrokerConfig): void {
  if (config.brokerRole === 'SLAVE') {
    if (config.brokerId <= 0) throw new ConfigError(`brokerId: a slave's brokerId must be > 0, got ${config.brokerId}`);
    if (config.haSemantics === '5.3.3') config.accessMessageInMemoryMaxRatio = Math.max(0, config.accessMessageInMemoryMaxRatio - 10);
  } else {
    config.brokerId = 0;
  }
  checkDLedgerKeys(config);
  if (config.enableDLegerCommitLog) config.brokerId = -1;
}

export interface RoleServices {
  config: BrokerConfig;
  store: DefaultMessageStore;
  /** The classic HA parts; absent in DLedger mode (no HA port, the Raft group replicates). */
  ha?: HaService;
  haClient?: HaClient;
  slaveSync: SlaveSynchronize;
  schedule: ScheduleMessageService;
  timer: TimerMessageService;
  transactionCheck: TransactionCheckService;
  /** POP revive: a master's service (5.3.3 changeSpecialServiceStatus); switched here in DLedger mode. */
  popRevive?: { start(): void; shutdown(): Promise<void> };
  /** DLedger mode: a slave forgets its master at every change and syncs on the DLedger handler's schedule. */
  dledger?: boolean;
  /** Registers with every nameserver now (oneway: without waiting for answers). */
  registerAll: (opts?: { oneway?: boolean }) => Promise<void>;
  logger: Logger;
}

export interface ApplyRoleOptions {
  /** Register afterwards: no (start-up, where the first registration follows), yes, or oneway (a DLedger change). */
  register: boolean | 'oneway';
  /** The brokerId the role comes with (DLedger: 0 as master, the member's follower id as slave). */
  brokerId?: number;
}

export class BrokerRoleSwitch {
  private masterServicesRunning = false;
  private slaveServicesRunning = false;

  constructor(private readonly s: RoleServices) {}

  /**
   * Moves the broker to `role`: the store first (a slave becoming a master settles its replicated tail), then the
   * services, then a registration (skipped at start-up, where the first registration follows).
   */
  async applyRole(role: BrokerRole, opts: ApplyRoleOptions = { register: true }): Promise<void> {
    const { s } = this;
    const from = s.config.brokerRole;
    const fromId = s.config.brokerId;
    await s.store.setBrokerRole(role);
    s.config.brokerRole = role;
    if (opts.brokerId !== undefined) s.config.brokerId = opts.brokerId;
    if (role === 'SLAVE') {
      s.ha?.setSyncMaster(false);
      await this.stopMasterServices();
      // DLedgerRoleChangeHandler.handleSlaveSynchronize: the master is learned anew (next periodic registration)
      if (s.dledger) s.slaveSync.masterAddr = null;
      if (!this.slaveServicesRunning) {
        s.haClient?.start();
        s.slaveSync.start(s.dledger ? 'dledger' : 'classic');
        this.slaveServicesRunning = true;
      }
    } else {
      await this.stopSlaveServices();
      if (s.dledger) s.slaveSync.masterAddr = null;
      s.ha?.setSyncMaster(role === 'SYNC_MASTER');
      if (!this.masterServicesRunning) {
        s.schedule.start();
        if (s.config.timerWheelEnable) await s.timer.start();
        s.transactionCheck.start();
        s.popRevive?.start();
        this.masterServicesRunning = true;
      }
    }
    s.logger.info({ from, to: role, brokerId: s.config.brokerId, fromBrokerId: fromId }, 'broker role applied');
    if (opts.register === 'oneway') await s.registerAll({ oneway: true });
    else if (opts.register) await s.registerAll();
  }

  private async stopMasterServices(): Promise<void> {
    if (!this.masterServicesRunning) return;
    this.masterServicesRunning = false;
    await this.s.schedule.shutdown();
    await this.s.timer.shutdown();
    await this.s.transactionCheck.shutdown();
    await this.s.popRevive?.shutdown();
  }

  private async stopSlaveServices(): Promise<void> {
    if (!this.slaveServicesRunning) return;
    this.slaveServicesRunning = false;
    this.s.haClient?.stop();
    await this.s.slaveSync.stop();
  }

  /** Shutdown: every role service stops (the HA listener is the broker's). */
  async stopAll(): Promise<void> {
    this.s.ha?.setSyncMaster(false);
    await this.stopSlaveServices();
    await this.stopMasterServices();
  }
}
