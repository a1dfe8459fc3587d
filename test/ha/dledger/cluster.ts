// Groups of our DLedger nodes in one process over real TCP on 127.0.0.1, for tests.
import type { Logger } from 'pino';
import { silentLogger } from '../../../src/common/logger.js';
import { DLedgerNode } from '../../../src/ha/dledger/node.js';
import { DLEDGER_NODE_TIMING, type DLedgerNodeConfig, type DLedgerRole } from '../../../src/ha/dledger/types.js';
import { MemoryDLedgerStore } from '../../helpers/memory-dledger-store.js';
import { freePorts } from './raw-peer.js';

export const GROUP = 'RaftNode00';

/** Timings scaled down from DLEDGER_DEFAULTS so elections take a fraction of a second (ratios kept). */
export const FAST_TIMING = {
  heartBeatTimeIntervalMs: 300,
  maxHeartBeatLeak: 3,
  minVoteIntervalMs: 100,
  maxVoteIntervalMs: 300,
} as const;

export function nodeConfig(selfId: string, peers: string, over: Partial<DLedgerNodeConfig> = {}): DLedgerNodeConfig {
  return {
    group: GROUP,
    selfId,
    peers,
    storeBaseDir: '/nonexistent',
    dataStorePath: null,
    mappedFileSizeForEntryDataBytes: 64 * 1024 * 1024,
    preferredLeaderIds: [],
    enableBatchPush: false,
    ...DLEDGER_NODE_TIMING,
    fastFailoverOnLeaderReset: false,
    ...over,
  };
}

/** Waits until `cond` holds, polling; the deadline only bounds a broken implementation. */
export async function waitFor<T>(what: string, cond: () => T | null | undefined | false | Promise<T | null | undefined | false>, deadlineMs = 20_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const v = await cond();
    if (v) return v;
    if (Date.now() - started > deadlineMs) throw new Error(`timed out after ${deadlineMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export interface RoleEvent {
  id: string;
  role: DLedgerRole;
  term: number;
  leaderId: string | null;
}

/** A group of nodes n0..n(k-1) with memory stores that survive a stop, so members can restart. */
export class TestGroup {
  readonly nodes = new Map<string, DLedgerNode>();
  readonly stores = new Map<string, MemoryDLedgerStore>();
  /** Every role change of every node, in order. */
  readonly events: RoleEvent[] = [];
  peers = '';

  constructor(
    readonly ids: string[],
    private readonly over: Partial<DLedgerNodeConfig> = FAST_TIMING,
    private readonly logger: Logger = silentLogger(),
    private readonly fileSizeBytes = 64 * 1024 * 1024,
  ) {}

  async init(): Promise<void> {
    const ports = await freePorts(this.ids.length);
    this.peers = this.ids.map((id, i) => `${id}-127.0.0.1:${ports[i]}`).join(';');
    for (const id of this.ids) this.stores.set(id, new MemoryDLedgerStore(this.fileSizeBytes));
  }

  async start(id: string): Promise<DLedgerNode> {
    const store = this.stores.get(id)!;
    store.loadSync(0);
    const node = new DLedgerNode(nodeConfig(id, this.peers, this.over), store, this.logger, { bindHost: '127.0.0.1' });
    node.onRoleChange((role, term, leaderId) => this.events.push({ id, role, term, leaderId }));
    this.nodes.set(id, node);
    await node.start();
    return node;
  }

  async startAll(): Promise<void> {
    for (const id of this.ids) await this.start(id);
  }

  async stop(id: string): Promise<void> {
    const node = this.nodes.get(id);
    this.nodes.delete(id);
    await node?.stop();
  }

  async stopAll(): Promise<void> {
    for (const id of [...this.nodes.keys()]) await this.stop(id);
  }

  running(): DLedgerNode[] {
    return [...this.nodes.values()];
  }

  /** The leader all running nodes agree on (leader role + every other running node follows it in its term). */
  agreedLeader(among = this.running()): DLedgerNode | null {
    const leaders = among.filter((n) => n.role === 'LEADER');
    if (leaders.length !== 1) return null;
    const l = leaders[0]!;
    return among.every((n) => n === l || (n.role === 'FOLLOWER' && n.leaderId === l.selfId && n.currTerm === l.currTerm)) ? l : null;
  }

  /** Terms in which two different nodes became leader (must stay empty). */
  twoLeaderTerms(): number[] {
    const byTerm = new Map<number, Set<string>>();
    for (const e of this.events) {
      if (e.role !== 'LEADER') continue;
      const s = byTerm.get(e.term) ?? new Set();
      s.add(e.id);
      byTerm.set(e.term, s);
    }
    return [...byTerm].filter(([, s]) => s.size > 1).map(([t]) => t);
  }
}
