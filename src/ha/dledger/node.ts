// A DLedger group member (D/DLedgerServer, protocol/dledger.md §1–§3): the peer RPC port, the elector, one push
// dispatcher per peer, the follower's push handler and the quorum tracker, over a DLedgerStorePort. Everything runs
// on timers and callbacks of the event loop; the store calls are synchronous (page-cache writes, §4.8).
import type { Logger } from 'pino';
import { DLedgerResponseCode } from './codes.js';
import { Elector } from './elector.js';
import { FollowerHandler } from './follower.js';
import { MemberState } from './member-state.js';
import { registerPeerHandlers } from './peer-handlers.js';
import { PeerRpcClient, PeerRpcServer, parsePeers, splitAddress } from './peer-rpc.js';
import { EntryDispatcher } from './pusher.js';
import { QuorumTracker } from './quorum.js';
import { LeadershipTransfer } from './transfer.js';
import {
  type DLedgerAppendResult,
  type DLedgerEntry,
  type DLedgerNodeConfig,
  type DLedgerNodePort,
  type DLedgerRole,
  type DLedgerStorePort,
  DLedgerStoreError,
} from './types.js';

export interface DLedgerNodeOptions {
  /** Address the peer port binds (default 0.0.0.0 like the official node; tests use 127.0.0.1). */
  bindHost?: string;
}

type RoleListener = (role: DLedgerRole, term: number, leaderId: string | null) => void;
type CommitListener = (committedIndex: number, committedPos: number) => void;

export class DLedgerNode implements DLedgerNodePort {
  readonly group: string;
  readonly selfId: string;
  readonly peers: ReadonlyMap<string, string>;
  /** @internal parts, reachable for the peer handlers and tests. */
  readonly ms: MemberState;
  readonly elector: Elector;
  readonly quorum: QuorumTracker;
  readonly follower: FollowerHandler;
  readonly transfer: LeadershipTransfer;
  readonly dispatchers = new Map<string, EntryDispatcher>();
  private readonly server: PeerRpcServer;
  private readonly client: PeerRpcClient;
  private readonly roleListeners: RoleListener[] = [];
  private readonly commitListeners: CommitListener[] = [];
  private started = false;
  private stopped = false;

  constructor(
    readonly config: DLedgerNodeConfig,
    readonly store: DLedgerStorePort,
    private readonly logger: Logger,
    private readonly options: DLedgerNodeOptions = {},
  ) {
    this.group = config.group;
    this.selfId = config.selfId;
    this.peers = parsePeers(config.peers);
    if (!this.peers.has(this.selfId)) throw new Error(`dLegerSelfId ${this.selfId} is not in dLegerPeers ${config.peers}`);
    this.logger = logger.child({ dledger: `${config.group}/${config.selfId}` });
    this.server = new PeerRpcServer(this.logger);
    this.client = new PeerRpcClient(this.logger);
    this.ms = new MemberState(this.group, this.selfId, this.peers, store);
    this.elector = new Elector(this.ms, this.client, config, this.logger, (role, term, leaderId) => this.roleChanged(role, term, leaderId));
    this.quorum = new QuorumTracker(this.ms, store, config.maxWaitAckTimeMs, config.maxPendingRequestsNum, (i) => this.advanceCommit(i), this.logger);
    this.follower = new FollowerHandler(this.ms, store, (i) => this.advanceCommit(i), this.logger);
    this.transfer = new LeadershipTransfer(this.ms, store, this.elector, this.quorum, this.client, config.preferredLeaderIds, this.logger);
    for (const [id, addr] of this.peers) {
      if (id === this.selfId) continue;
      this.dispatchers.set(id, new EntryDispatcher(id, addr, this.ms, store, this.client, this.quorum, config.maxPushTimeOutMs, config.enableBatchPush, this.logger));
    }
    registerPeerHandlers(this.server, this);
  }

  get role(): DLedgerRole {
    return this.ms.role;
  }

  get currTerm(): number {
    return this.ms.currTerm;
  }

  get leaderId(): string | null {
    return this.ms.leaderId;
  }

  /** The bound peer port. */
  get port(): number {
    return this.server.port;
  }

  /** Binds the peer port of our own dLegerPeers entry, then starts the routines. The store must be loaded. */
  async start(): Promise<void> {
    if (this.started) throw new Error('dledger node already started');
    this.started = true;
    const { port } = splitAddress(this.peers.get(this.selfId)!);
    await this.server.listen(port, this.options.bindHost ?? '0.0.0.0');
    this.quorum.start();
    this.follower.start();
    for (const d of this.dispatchers.values()) d.start();
    this.transfer.start();
    this.elector.start();
    this.logger.info({ port: this.server.port, term: this.ms.currTerm, end: this.store.endIndex }, 'dledger node started');
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.elector.stop();
    for (const d of this.dispatchers.values()) d.stop();
    this.transfer.stop();
    this.follower.stop();
    this.quorum.stop();
    await this.server.close();
    await this.client.close();
    this.store.close();
    this.logger.info('dledger node stopped');
  }

  append(body: Buffer, hook?: (entryBytes: Buffer, pos: number) => void): { appended: DLedgerEntry | null; acked: Promise<DLedgerAppendResult> } {
    const refused = (code: number): { appended: null; acked: Promise<DLedgerAppendResult> } => ({
      appended: null,
      acked: Promise.resolve({ code, index: -1, pos: -1 }),
    });
    const ms = this.ms;
    if (this.stopped || ms.role !== 'LEADER') return refused(DLedgerResponseCode.NOT_LEADER);
    if (ms.transferee !== null) return refused(DLedgerResponseCode.LEADER_TRANSFERRING);
    const term = ms.currTerm;
    if (this.quorum.isPendingFull(term)) return refused(DLedgerResponseCode.LEADER_PENDING_FULL);
    let entry: DLedgerEntry;
    try {
      entry = this.store.appendAsLeader(body, term, hook);
    } catch (err) {
      if (err instanceof DLedgerStoreError) return refused(err.code);
      this.logger.error({ err }, 'dledger: leader append failed');
      return refused(DLedgerResponseCode.DISK_ERROR);
    }
    const acked = this.quorum.waitAck(entry);
    for (const d of this.dispatchers.values()) d.wakeup();
    return { appended: entry, acked };
  }

  onRoleChange(listener: RoleListener): void {
    this.roleListeners.push(listener);
  }

  onCommitted(listener: CommitListener): void {
    this.commitListeners.push(listener);
  }

  async transferLeadership(transfereeId: string): Promise<number> {
    const res = await this.transfer.handle({
      code: DLedgerResponseCode.SUCCESS,
      group: this.group,
      leaderId: this.ms.leaderId,
      localId: this.selfId,
      remoteId: this.selfId,
      term: this.ms.currTerm,
      transferId: this.selfId,
      transfereeId,
      takeLeadershipLedgerIndex: 0,
    });
    return res.code;
  }

  /** Moves the committed index (never backwards, capped by the store) and tells the listeners when it moved. */
  private advanceCommit(index: number): void {
    if (index < 0) return;
    const before = this.store.committedIndex;
    if (index <= before) return;
    this.store.updateCommittedIndex(index);
    const after = this.store.committedIndex;
    if (after <= before) return;
    const pos = this.store.committedPos;
    for (const l of this.commitListeners) {
      try {
        l(after, pos);
      } catch (err) {
        this.logger.error({ err }, 'dledger commit listener failed');
      }
    }
  }

  private roleChanged(role: DLedgerRole, term: number, leaderId: string | null): void {
    // Waiting appends of a leader that stepped down cannot be acknowledged by it any more (ours: Java leaves them
    // pending until this node leads again).
    if (role !== 'LEADER') this.quorum.failAll(DLedgerResponseCode.TERM_CHANGED);
    this.follower.drain();
    if (role === 'LEADER') for (const d of this.dispatchers.values()) d.wakeup();
    for (const l of this.roleListeners) {
      try {
        l(role, term, leaderId);
      } catch (err) {
        this.logger.error({ err, role, term }, 'dledger role listener failed');
      }
    }
  }
}
