// DLedger mode's broker keys (Java MessageStoreConfig: enableDLegerCommitLog, dLegerGroup, dLegerPeers, dLegerSelfId,
// preferredLeaderId, enableBatchPush, storePathDLedgerCommitLog; protocol/dledger.md §6.1), their forms, and the
// checks across them that Java only finds by crashing at start (DLedgerCommitLog constructor, DLedgerConfig).
import { ConfigError, type Schema } from './config-schema.js';

/** A member id as the broker derives a broker id from it: one letter, then digits (`n0`; DLedgerCommitLog parses substring(1)). */
const SELF_ID_FORM = /^[A-Za-z]\d+$/;

export interface DLedgerPeer {
  id: string;
  /** `host:port` of its peer port. */
  addr: string;
}

/**
 * `n0-127.0.0.1:40911;n1-127.0.0.1:40912` → members in order (DLedgerConfig / MemberState: the id is the text
 * before the first `-`). Throws on an empty entry list, a malformed entry, a bad port or a repeated id.
 */
export function parseDLedgerPeers(spec: string): DLedgerPeer[] {
  const peers: DLedgerPeer[] = [];
  for (const part of spec.split(';')) {
    const entry = part.trim();
    if (entry === '') continue;
    const dash = entry.indexOf('-');
    if (dash <= 0) throw new Error(`"${entry}" is not id-host:port`);
    const id = entry.slice(0, dash);
    const addr = entry.slice(dash + 1);
    const colon = addr.lastIndexOf(':');
    const port = Number(addr.slice(colon + 1));
    if (colon <= 0 || !/^\d+$/.test(addr.slice(colon + 1)) || !(port > 0 && port <= 65535)) {
      throw new Error(`"${entry}": the address must be host:port with a port in 1-65535`);
    }
    if (peers.some((p) => p.id === id)) throw new Error(`member id ${id} is listed twice`);
    peers.push({ id, addr });
  }
  if (peers.length === 0) throw new Error('no members listed');
  return peers;
}

function checkSelfIdForm(id: string): void {
  if (id !== '' && !SELF_ID_FORM.test(id)) throw new Error(`"${id}" must be one letter followed by digits (e.g. n0)`);
}

export const DLEDGER_SCHEMA = {
  /** DLedger mode: the commit log is a Raft log replicated within the group; masters are elected (Java false). */
  enableDLegerCommitLog: { type: 'bool', default: false },
  /** The Raft group's name, the same on every member (conventionally the brokerName). */
  dLegerGroup: { type: 'string', default: '' },
  /** Every member as `id-host:port`, `;`-separated; the port is the member's peer port. */
  dLegerPeers: { type: 'string', default: '', check: (v: string) => (v.trim() === '' ? undefined : parseDLedgerPeers(v)) },
  /** This member's id in dLegerPeers: one letter and digits; a follower's brokerId is those digits + 1. */
  dLegerSelfId: { type: 'string', default: '', check: checkSelfIdForm },
  /** Member ids (`;`-separated) the leader hands leadership to when one of them is live and caught up (Java null). */
  preferredLeaderId: { type: 'string', default: '' },
  /** The leader pushes entries to followers in batches (Java false). */
  enableBatchPush: { type: 'bool', default: false },
  /** The DLedger data files' directory; empty = `{storePathRootDir}/dledger-{dLegerSelfId}/data` (Java null). */
  storePathDLedgerCommitLog: { type: 'string', default: '' },
} as const satisfies Schema;

export interface DLedgerKeys {
  enableDLegerCommitLog: boolean;
  dLegerGroup: string;
  dLegerPeers: string;
  dLegerSelfId: string;
}

/**
 * The checks across the DLedger keys, at start: group, peers and selfId are required in DLedger mode, and selfId
 * must be one of the peers (Java crashes at start on each: DLedgerCommitLog parses selfId, MemberState looks it up).
 */
export function checkDLedgerKeys(c: DLedgerKeys): void {
  if (!c.enableDLegerCommitLog) return;
  if (c.dLegerGroup.trim() === '') throw new ConfigError('dLegerGroup: required with enableDLegerCommitLog=true');
  if (c.dLegerPeers.trim() === '') throw new ConfigError('dLegerPeers: required with enableDLegerCommitLog=true (id-host:port;...)');
  if (c.dLegerSelfId === '') throw new ConfigError('dLegerSelfId: required with enableDLegerCommitLog=true');
  let peers: DLedgerPeer[];
  try {
    peers = parseDLedgerPeers(c.dLegerPeers);
  } catch (err) {
    throw new ConfigError(`dLegerPeers: ${(err as Error).message}`);
  }
  if (!peers.some((p) => p.id === c.dLegerSelfId)) {
    throw new ConfigError(`dLegerSelfId: ${c.dLegerSelfId} is not one of dLegerPeers (${peers.map((p) => p.id).join(', ')})`);
  }
}

/**
 * The brokerId a DLedger member registers with while it follows: the digits of its id + 1 (`n0` → 1, `n2` → 3;
 * DLedgerCommitLog.id and DLedgerRoleChangeHandler.changeToSlave, where an id of 0 would become 1).
 */
export function followerBrokerIdOf(selfId: string): number {
  const id = Number.parseInt(selfId.slice(1), 10) + 1;
  return id === 0 ? 1 : id;
}
