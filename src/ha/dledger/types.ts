// The seams of DLedger mode (issue #14), written before the parts so they can be built side by side:
//   store (dledger-<selfId>/data, index, currterm, checkpoint)  ← Raft node (elector, pusher, follower, peer RPC)
//   ← broker commit log (CommitLogPort over the node) and the role-change handler.
// Follows openmessaging/dledger 0.3.1.2, the version both official 4.9.8 and 5.3.3 ship; see
// protocol/dledger.md for every rule these names refer to (§ numbers below are its sections).

/** DLedger member roles (D/MemberState.Role). A node starts as CANDIDATE and gets no callback for that. */
export type DLedgerRole = 'CANDIDATE' | 'FOLLOWER' | 'LEADER';

/** One log entry (D/entry/DLedgerEntry); bytes on disk and on the wire per §4.2 / §1.5. */
export interface DLedgerEntry {
  /** 1 for every entry 0.3.1.2 writes (−1 is the file-end blank, never an entry). */
  magic: number;
  /** 48 + body length. */
  size: number;
  /** 0-based, consecutive. */
  index: number;
  /** Leader term when it was appended. */
  term: number;
  /** Absolute byte offset of the entry's first header byte in the data files. */
  pos: number;
  /** Always 0 in 0.3.1.2 (kept so what we receive is written back unchanged). */
  channel: number;
  chainCrc: number;
  bodyCrc: number;
  /** One standard commit-log record (the broker's); the Raft layer never looks inside. */
  body: Buffer;
}

/** DLedger header bytes before the body (BODY_OFFSET). A message's physical offset is entry.pos + this. */
export const DLEDGER_ENTRY_HEADER_BYTES = 48;

/** D/protocol/DLedgerResponseCode, the codes the layers hand each other (the one table is codes.ts). */
export { DLedgerResponseCode as DLedgerCode } from './codes.js';

/** A store refusal: the DLedger code the caller answers with, and why (for logs and remarks). */
export class DLedgerStoreError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The Raft log on disk (D/store/file/DLedgerMmapFileStore), byte-compatible with an official 0.3.1.2 member's
 * files. Synchronous like the Java mmap store: writes go to the page cache before the call returns (an append is
 * "held" once written, §4.8), a background timer flushes. Only the Raft node mutates it; the broker's
 * commit log reads from it.
 */
export interface DLedgerStorePort {
  /** Index of the first entry still stored, −1 when empty. */
  readonly beginIndex: number;
  /** Index of the last entry (inclusive), −1 when empty. */
  readonly endIndex: number;
  /** Term of the last entry, −1 when empty. */
  readonly endTerm: number;
  /** Highest index known committed (−1 none); never above endIndex. */
  readonly committedIndex: number;
  /** End byte (pos + size) of the committed entry; when none is committed, the data's min offset. */
  readonly committedPos: number;
  /** First byte of the data files (the first file's start + its first entry's position). */
  readonly minOffset: number;
  /** The byte position the next entry will be written at (after any file-end blank it needs). */
  readonly writePos: number;

  /**
   * Loads files, recovers (protocol/dledger.md §4.7) and reads currterm/checkpoint. `startOffset` is where the first data file
   * starts when there is none yet (the classic commit log's end on a migrating broker, §5.4; else 0).
   */
  loadSync(startOffset: number): void;

  /**
   * Leader append: index = end+1, the given term, magic 1, position reserved (crossing to the next file with a
   * blank when size + 8 exceeds the room left). `hook` runs on the encoded entry bytes before they are written
   * (the broker writes PHYSICALOFFSET = pos + 48 into the record). Throws DLedgerStoreError (DISK_FULL, …).
   */
  appendAsLeader(body: Buffer, term: number, hook?: (entryBytes: Buffer, pos: number) => void): DLedgerEntry;
  /** Follower append of a pushed entry: requires entry.index == end+1 and entry.pos == writePos (else throws 406-class). */
  appendAsFollower(entry: DLedgerEntry): void;
  /**
   * Follower truncate (protocol/dledger.md §4.5): if the stored entry at entry.index equals it, cut right after it; else cut at
   * its position and write it. Afterwards endIndex == entry.index. May rebuild the files at entry.pos when that
   * position is not inside them. Returns the new end index.
   */
  truncate(entry: DLedgerEntry): number;
  /** The entry at `index`, or null when outside [beginIndex, endIndex]. */
  get(index: number): DLedgerEntry | null;
  /** Raw bytes [pos, pos + size) of written data (headers included), or null when not stored. */
  readData(pos: number, size: number): Buffer | null;
  /** Moves the committed index forward (capped at endIndex; never backwards); persisted by the checkpoint timer. */
  updateCommittedIndex(index: number): void;

  /** currterm file (keys currTerm, voteLeader; tmp + rename, previous copied to .bak). */
  readonly persistedTerm: { currTerm: number; voteLeader: string | null };
  persistTerm(currTerm: number, voteLeader: string | null): void;

  /** Data files oldest first, for retention (CommitLogFile-like: path, fromOffset, endOffset). */
  readonly dataFiles: readonly { readonly filePath: string; readonly fromOffset: number; readonly endOffset: number }[];
  /** Drops the oldest data file if it is not the last; the begin index moves to the next file's first entry. */
  dropOldestDataFile(filePath: string): boolean;

  /** Flushes data + index, writes the checkpoint, closes. */
  close(): void;
}

/** A leader append as the node answers it (D/protocol/AppendEntryResponse + the future). */
export interface DLedgerAppendResult {
  /** SUCCESS once a quorum holds the entry; otherwise the DLedger code (NOT_LEADER, WAIT_QUORUM_ACK_TIMEOUT, …). */
  code: number;
  /** −1 when refused before anything was appended (the official pos −1 case, §5.2). */
  index: number;
  pos: number;
}

/**
 * A DLedger group member (D/DLedgerServer): peer RPC on the port of its own `dLegerPeers` entry, elections,
 * heartbeats, replication by push, quorum commit. Leader appends go through `append` (in-process, like the
 * broker's handleAppend); followers receive pushes and advance their commit index from them.
 */
export interface DLedgerNodePort {
  readonly group: string;
  readonly selfId: string;
  /** id → "host:port" from dLegerPeers (including self). */
  readonly peers: ReadonlyMap<string, string>;
  readonly role: DLedgerRole;
  readonly currTerm: number;
  /** Known leader id, null while none. */
  readonly leaderId: string | null;
  readonly store: DLedgerStorePort;

  /** Binds the peer port and starts the elector, pushers and follower handler. Resolves once listening. */
  start(): Promise<void>;
  /** Stops timers and sockets, then closes the store. */
  stop(): Promise<void>;

  /**
   * Leader only. Refusals before any write (not leader 404, transferring 506, pending full 503, disk full 415)
   * come back at once with `appended` null; otherwise the entry is appended locally (queue offsets may be taken
   * from it) and `acked` settles when a quorum holds it or the wait fails (502 after 2.5 s, 501 on term change).
   */
  append(body: Buffer, hook?: (entryBytes: Buffer, pos: number) => void): {
    appended: DLedgerEntry | null;
    acked: Promise<DLedgerAppendResult>;
  };

  /** Called on every role change (after the node's own state changed), in order, never concurrently. */
  onRoleChange(listener: (role: DLedgerRole, term: number, leaderId: string | null) => void): void;
  /** Called whenever the committed index (and committedPos) moved forward, on leader and followers alike. */
  onCommitted(listener: (committedIndex: number, committedPos: number) => void): void;

  /** Asks the current leader (this node) to hand leadership to `transfereeId` (protocol/dledger.md §2.8). */
  transferLeadership(transfereeId: string): Promise<number>;
}

/** Configuration the broker hands the node (DLedgerConfig defaults, §6.2). */
export interface DLedgerNodeConfig {
  group: string;
  selfId: string;
  /** `n0-host:port;n1-host:port;…` (id = text before the first '-'). */
  peers: string;
  /** storePathRootDir; files live in `<storeBaseDir>/dledger-<selfId>/`. */
  storeBaseDir: string;
  /** storePathDLedgerCommitLog override for data/ (null: default). */
  dataStorePath: string | null;
  /** = broker mappedFileSizeCommitLog; must be equal on every member. */
  mappedFileSizeForEntryDataBytes: number;
  preferredLeaderIds: string[];
  enableBatchPush: boolean;
  heartBeatTimeIntervalMs: number;
  maxHeartBeatLeak: number;
  minVoteIntervalMs: number;
  maxVoteIntervalMs: number;
  maxPendingRequestsNum: number;
  maxWaitAckTimeMs: number;
  maxPushTimeOutMs: number;
  /**
   * Our extension (issue #14): a follower whose inbound link from the leader resets, and whose leader's peer port
   * then refuses a connection, campaigns at once instead of waiting maxHeartBeatLeak heartbeats.
   */
  fastFailoverOnLeaderReset: boolean;
}

export const DLEDGER_DEFAULTS = {
  heartBeatTimeIntervalMs: 2000,
  maxHeartBeatLeak: 3,
  minVoteIntervalMs: 300,
  maxVoteIntervalMs: 1000,
  maxPendingRequestsNum: 10000,
  maxWaitAckTimeMs: 2500,
  maxPushTimeOutMs: 1000,
  /** Index files are 32 × 5 Mi units, not configurable from the broker. */
  indexFileBytes: 167_772_160,
  flushFileIntervalMs: 10,
  checkPointIntervalMs: 3000,
} as const;

/** The timing and quota part of a DLedgerNodeConfig at DLedger 0.3.1.2's defaults (the broker exposes none of them). */
export const DLEDGER_NODE_TIMING = {
  heartBeatTimeIntervalMs: DLEDGER_DEFAULTS.heartBeatTimeIntervalMs,
  maxHeartBeatLeak: DLEDGER_DEFAULTS.maxHeartBeatLeak,
  minVoteIntervalMs: DLEDGER_DEFAULTS.minVoteIntervalMs,
  maxVoteIntervalMs: DLEDGER_DEFAULTS.maxVoteIntervalMs,
  maxPendingRequestsNum: DLEDGER_DEFAULTS.maxPendingRequestsNum,
  maxWaitAckTimeMs: DLEDGER_DEFAULTS.maxWaitAckTimeMs,
  maxPushTimeOutMs: DLEDGER_DEFAULTS.maxPushTimeOutMs,
} satisfies Partial<DLedgerNodeConfig>;
