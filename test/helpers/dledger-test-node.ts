// A stand-in for our own DLedger parts (src/ha/dledger/types.ts seams), for testing the broker's commit log and
// role handling without elections or peers: an in-memory store with the official entry layout, file-end blanks and
// positions (protocol/dledger.md §4.2-§4.5), and a single-member node that is leader at once and commits what it
// appends. Tests can hold commits back, refuse or fail appends, push entries as a leader would, and switch roles.
// The end-to-end tests use the real DLedgerNode / DLedgerFileStore instead. (The Raft node's own double,
// memory-dledger-store.ts, serves whole entries only; the commit log's reput reads byte ranges across entries and
// blanks, as it does from the real files.)
import {
  DLEDGER_ENTRY_HEADER_BYTES, DLedgerCode, type DLedgerAppendResult, type DLedgerEntry, type DLedgerNodePort,
  type DLedgerRole, DLedgerStoreError, type DLedgerStorePort,
} from '../../src/ha/dledger/types.js';
import { decodeEntry, encodeEntry } from '../../src/ha/dledger/store/entry-codec.js';

const BLANK_MAGIC = -1;
const MIN_BLANK_BYTES = 8;

/**
 * The entries in memory, laid out in "files" of `fileSizeBytes` exactly as the official store lays them out. The
 * object outlives a store's close: handing it to a new commit log is a restart on the same disk.
 */
export class LaidOutMemoryStore implements DLedgerStorePort {
  private readonly files = new Map<number, Buffer>();
  private readonly entryPos: number[] = [];
  private firstIndex = 0;
  beginIndex = -1;
  endIndex = -1;
  endTerm = -1;
  committedIndex = -1;
  private nextPos = 0;
  private startOffset = 0;
  persistedTerm: { currTerm: number; voteLeader: string | null } = { currTerm: 0, voteLeader: null };
  loads = 0;
  closed = false;

  constructor(readonly fileSizeBytes: number) {}

  loadSync(startOffset: number): void {
    this.loads++;
    this.closed = false;
    if (this.files.size === 0 && this.endIndex === -1) this.nextPos = this.startOffset = startOffset;
  }

  get committedPos(): number {
    if (this.committedIndex < 0 || this.committedIndex < this.beginIndex) return this.minOffset;
    const pos = this.entryPos[this.committedIndex - this.firstIndex]!;
    return pos + this.readData(pos, 8)!.readInt32BE(4);
  }

  get minOffset(): number {
    return this.beginIndex >= 0 ? this.entryPos[this.beginIndex - this.firstIndex]! : this.startOffset;
  }

  get writePos(): number {
    return this.nextPos;
  }

  /** Where an entry of `size` bytes goes: a blank fills the file's rest when it does not fit with 8 spare bytes. */
  private place(size: number, writeBlank: boolean): number {
    const fs = this.fileSizeBytes;
    const room = fs - (this.nextPos % fs);
    if (size + MIN_BLANK_BYTES > room) {
      if (writeBlank) {
        const f = this.file(this.nextPos);
        f.writeInt32BE(BLANK_MAGIC, this.nextPos % fs);
        f.writeInt32BE(room, (this.nextPos % fs) + 4);
      }
      return this.nextPos + room;
    }
    return this.nextPos;
  }

  private file(pos: number): Buffer {
    const start = pos - (pos % this.fileSizeBytes);
    let f = this.files.get(start);
    if (!f) {
      f = Buffer.alloc(this.fileSizeBytes);
      this.files.set(start, f);
    }
    return f;
  }

  private write(entry: DLedgerEntry, bytes: Buffer): void {
    this.file(entry.pos);
    bytes.copy(this.files.get(entry.pos - (entry.pos % this.fileSizeBytes))!, entry.pos % this.fileSizeBytes);
    if (this.endIndex === -1) {
      this.firstIndex = entry.index;
      this.beginIndex = entry.index;
    }
    this.entryPos[entry.index - this.firstIndex] = entry.pos;
    this.endIndex = entry.index;
    this.endTerm = entry.term;
    this.nextPos = entry.pos + entry.size;
  }

  appendAsLeader(body: Buffer, term: number, hook?: (entryBytes: Buffer, pos: number) => void): DLedgerEntry {
    if (this.closed) throw new DLedgerStoreError(DLedgerCode.DISK_ERROR, 'store closed');
    const size = DLEDGER_ENTRY_HEADER_BYTES + body.length;
    if (size + MIN_BLANK_BYTES > this.fileSizeBytes) throw new DLedgerStoreError(DLedgerCode.DISK_ERROR, 'entry larger than a file');
    const pos = this.place(size, true);
    this.nextPos = pos;
    const entry: DLedgerEntry = { magic: 1, size, index: this.endIndex + 1, term, pos, channel: 0, chainCrc: 0, bodyCrc: 0, body };
    const bytes = encodeEntry(entry);
    hook?.(bytes, pos);
    this.write(entry, bytes);
    return { ...entry, body: Buffer.from(bytes.subarray(DLEDGER_ENTRY_HEADER_BYTES)) };
  }

  appendAsFollower(entry: DLedgerEntry): void {
    if (entry.index !== this.endIndex + 1) throw new DLedgerStoreError(DLedgerCode.INCONSISTENT_INDEX, `index ${entry.index}, end ${this.endIndex}`);
    const pos = this.place(entry.size, false);
    if (pos !== entry.pos) throw new DLedgerStoreError(DLedgerCode.INCONSISTENT_STATE, `pos ${entry.pos}, expected ${pos}`);
    this.place(entry.size, true);
    this.nextPos = pos;
    this.write(entry, encodeEntry(entry));
  }

  truncate(entry: DLedgerEntry): number {
    const local = this.get(entry.index);
    if (local && local.term === entry.term && local.pos === entry.pos) {
      this.entryPos.length = entry.index - this.firstIndex + 1;
      this.endIndex = entry.index;
      this.endTerm = entry.term;
      this.nextPos = entry.pos + entry.size;
    } else {
      this.entryPos.length = Math.max(0, entry.index - this.firstIndex);
      this.endIndex = entry.index - 1;
      this.nextPos = entry.pos;
      this.write(entry, encodeEntry(entry));
    }
    // bytes after the new end are zeroed, as a truncation leaves them
    const f = this.file(this.nextPos);
    f.fill(0, this.nextPos % this.fileSizeBytes);
    return this.endIndex;
  }

  get(index: number): DLedgerEntry | null {
    if (index < this.beginIndex || index > this.endIndex || this.beginIndex < 0) return null;
    const pos = this.entryPos[index - this.firstIndex]!;
    const size = this.readData(pos, 8)!.readInt32BE(4);
    return decodeEntry(this.readData(pos, size)!);
  }

  readData(pos: number, size: number): Buffer | null {
    const start = pos - (pos % this.fileSizeBytes);
    const f = this.files.get(start);
    if (!f || pos < this.minOffset || (pos % this.fileSizeBytes) + size > this.fileSizeBytes) return null;
    return Buffer.from(f.subarray(pos % this.fileSizeBytes, (pos % this.fileSizeBytes) + size));
  }

  updateCommittedIndex(index: number): void {
    const capped = Math.min(index, this.endIndex);
    if (capped > this.committedIndex) this.committedIndex = capped;
  }

  persistTerm(currTerm: number, voteLeader: string | null): void {
    this.persistedTerm = { currTerm, voteLeader };
  }

  get dataFiles(): { filePath: string; fromOffset: number; endOffset: number }[] {
    return [...this.files.keys()].sort((a, b) => a - b).map((from) => ({
      filePath: `memory:${from}`, fromOffset: from, endOffset: from + this.fileSizeBytes,
    }));
  }

  dropOldestDataFile(filePath: string): boolean {
    const files = this.dataFiles;
    if (files.length < 2 || files[0]!.filePath !== filePath) return false;
    this.files.delete(files[0]!.fromOffset);
    // the begin index moves to the first entry at or after the next file's start
    let i = this.beginIndex;
    while (i <= this.endIndex && this.entryPos[i - this.firstIndex]! < files[1]!.fromOffset) i++;
    this.beginIndex = i;
    return true;
  }

  close(): void {
    this.closed = true;
  }
}

interface PendingAck {
  index: number;
  pos: number;
  resolve: (r: DLedgerAppendResult) => void;
}

/**
 * A one-member group: `start()` makes it leader in term 1 (unless told otherwise), and every append commits on the
 * next turn of the event loop. `autoCommit = false` holds commits until `commitUpTo`.
 */
export class TestDLedgerNode implements DLedgerNodePort {
  readonly peers: ReadonlyMap<string, string>;
  role: DLedgerRole = 'CANDIDATE';
  currTerm = 0;
  leaderId: string | null = null;
  autoCommit = true;
  started = false;
  stopped = false;
  private readonly roleListeners: Array<(role: DLedgerRole, term: number, leaderId: string | null) => void> = [];
  private readonly commitListeners: Array<(committedIndex: number, committedPos: number) => void> = [];
  private pending: PendingAck[] = [];
  private refusals: Array<number | undefined> = [];
  private ackFailures: number[] = [];

  constructor(
    readonly store: LaidOutMemoryStore,
    readonly selfId = 'n0',
    readonly group = 'TestGroup',
    private readonly leaderAtStart = true,
  ) {
    this.peers = new Map([[selfId, '127.0.0.1:1']]);
  }

  async start(): Promise<void> {
    this.started = true;
    if (this.leaderAtStart) this.becomeLeader();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const p of this.pending) p.resolve({ code: DLedgerCode.TERM_CHANGED, index: p.index, pos: p.pos });
    this.pending = [];
    this.store.close();
  }

  /** An append is refused before anything is written (NOT_LEADER, LEADER_PENDING_FULL, ...): the next, or after `skip` taken. */
  refuseNext(code: number, skip = 0): void {
    for (let i = 0; i < skip; i++) this.refusals.push(undefined);
    this.refusals.push(code);
  }

  /** The next append is written but its wait ends with `code` (WAIT_QUORUM_ACK_TIMEOUT, TERM_CHANGED, ...). */
  failNextAck(code: number): void {
    this.ackFailures.push(code);
  }

  append(body: Buffer, hook?: (entryBytes: Buffer, pos: number) => void): { appended: DLedgerEntry | null; acked: Promise<DLedgerAppendResult> } {
    const refusal = this.role !== 'LEADER' ? DLedgerCode.NOT_LEADER : this.refusals.shift();
    if (refusal !== undefined) return { appended: null, acked: Promise.resolve({ code: refusal, index: -1, pos: -1 }) };
    let appended: DLedgerEntry;
    try {
      appended = this.store.appendAsLeader(body, this.currTerm, hook);
    } catch (err) {
      const code = err instanceof DLedgerStoreError ? err.code : DLedgerCode.INTERNAL_ERROR;
      return { appended: null, acked: Promise.resolve({ code, index: -1, pos: -1 }) };
    }
    const failure = this.ackFailures.shift();
    if (failure !== undefined) {
      return { appended, acked: Promise.resolve({ code: failure, index: appended.index, pos: appended.pos }) };
    }
    const acked = new Promise<DLedgerAppendResult>((resolve) => this.pending.push({ index: appended.index, pos: appended.pos, resolve }));
    if (this.autoCommit) setImmediate(() => this.commitUpTo(appended.index));
    return { appended, acked };
  }

  /** Commits through `index`: the store's commit index moves, listeners hear of it, waiting appends succeed. */
  commitUpTo(index: number): void {
    const before = this.store.committedIndex;
    this.store.updateCommittedIndex(index);
    const now = this.store.committedIndex;
    if (now > before) for (const l of this.commitListeners) l(now, this.store.committedPos);
    const done = this.pending.filter((p) => p.index <= now);
    this.pending = this.pending.filter((p) => p.index > now);
    for (const p of done) p.resolve({ code: DLedgerCode.SUCCESS, index: p.index, pos: p.pos });
  }

  /** An entry pushed by some leader (this node must follow). */
  receive(entry: DLedgerEntry): void {
    this.store.appendAsFollower(entry);
  }

  becomeLeader(): void {
    this.setRole('LEADER', this.currTerm + 1, this.selfId);
  }

  becomeFollower(leaderId = 'n9', term = this.currTerm + 1): void {
    this.setRole('FOLLOWER', term, leaderId);
  }

  becomeCandidate(): void {
    this.setRole('CANDIDATE', this.currTerm + 1, null);
  }

  private setRole(role: DLedgerRole, term: number, leaderId: string | null): void {
    if (this.role === 'LEADER' && role !== 'LEADER') {
      for (const p of this.pending) p.resolve({ code: DLedgerCode.TERM_CHANGED, index: p.index, pos: p.pos });
      this.pending = [];
    }
    this.role = role;
    this.currTerm = term;
    this.leaderId = leaderId;
    for (const l of this.roleListeners) l(role, term, leaderId);
  }

  onRoleChange(listener: (role: DLedgerRole, term: number, leaderId: string | null) => void): void {
    this.roleListeners.push(listener);
  }

  onCommitted(listener: (committedIndex: number, committedPos: number) => void): void {
    this.commitListeners.push(listener);
  }

  async transferLeadership(): Promise<number> {
    return DLedgerCode.INTERNAL_ERROR;
  }
}
