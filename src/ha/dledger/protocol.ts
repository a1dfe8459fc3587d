// The request/response classes of DLedger 0.3.1.2 (D/protocol/*, protocol/dledger.md §1.5) as plain values, with
// their fastjson 1 bodies: decode* reads what a Java peer sends (lenient), encode* writes the exact key set the
// official node writes, sorted, nulls omitted.
import { DLedgerResponseCode, PUSH_TYPES, type PushType, VOTE_RESULTS, type VoteResult } from './codes.js';
import {
  type JsonObject,
  entryJson,
  javaHashMapOrder,
  parseBody,
  readBytes,
  readEntryList,
  readEnum,
  readLong,
  readLongList,
  readOptEntry,
  readOptLong,
  readString,
  readStringMap,
  writeBody,
} from './json.js';
import type { DLedgerEntry } from './types.js';

/** D/protocol/RequestOrResponse: every request and response carries these (code 200 and term −1 by default). */
export interface DLedgerBase {
  code: number;
  group: string | null;
  /** Sender's idea of the leader (vote: the candidate; heartbeat/push: the leader). */
  leaderId: string | null;
  /** Sender id. */
  localId: string | null;
  /** Receiver id. */
  remoteId: string | null;
  term: number;
}

export function baseDefaults(): DLedgerBase {
  return { code: DLedgerResponseCode.SUCCESS, group: null, leaderId: null, localId: null, remoteId: null, term: -1 };
}

/** RequestOrResponse.copyBaseInfo. */
export function copyBase(from: DLedgerBase): DLedgerBase {
  return { code: from.code, group: from.group, leaderId: from.leaderId, localId: from.localId, remoteId: from.remoteId, term: from.term };
}

export interface VoteRequest extends DLedgerBase {
  ledgerEndIndex: number;
  ledgerEndTerm: number;
}
export interface VoteResponse extends DLedgerBase {
  /** null when the peer sent a name this version does not know. */
  voteResult: VoteResult | null;
}
export type HeartBeatRequest = DLedgerBase;
export type HeartBeatResponse = DLedgerBase;
export interface AppendEntryRequest extends DLedgerBase {
  body: Buffer | null;
}
export interface AppendEntryResponse extends DLedgerBase {
  index: number;
  pos: number;
}
export interface GetEntriesRequest extends DLedgerBase {
  beginIndex: number | null;
  maxSize: number;
  indexList: number[] | null;
}
export interface GetEntriesResponse extends DLedgerBase {
  entries: DLedgerEntry[];
}
export type MetadataRequest = DLedgerBase;
export interface MetadataResponse extends DLedgerBase {
  peers: Map<string, string> | null;
}
export interface PullEntriesRequest extends DLedgerBase {
  beginIndex: number | null;
  nodeId: string | null;
}
export interface PullEntriesResponse extends DLedgerBase {
  entries: DLedgerEntry[];
}
export interface PushEntryRequest extends DLedgerBase {
  commitIndex: number;
  /** null when the sender used a type this version does not know (e.g. 0.4.0's INSTALL_SNAPSHOT). */
  type: PushType | null;
  entry: DLedgerEntry | null;
  /** Consecutive entries of a batch push; empty otherwise. */
  batchEntry: DLedgerEntry[];
}
export interface PushEntryResponse extends DLedgerBase {
  /** First index of the request answered (null for COMMIT). */
  index: number | null;
  beginIndex: number;
  endIndex: number;
  count: number;
}
export interface LeadershipTransferRequest extends DLedgerBase {
  transferId: string | null;
  transfereeId: string | null;
  takeLeadershipLedgerIndex: number;
}
export type LeadershipTransferResponse = DLedgerBase;

// ---- reading -----------------------------------------------------------------------------------------------------

function readBase(o: JsonObject): DLedgerBase {
  return {
    code: readLong(o, 'code', DLedgerResponseCode.SUCCESS),
    group: readString(o, 'group'),
    leaderId: readString(o, 'leaderId'),
    localId: readString(o, 'localId'),
    remoteId: readString(o, 'remoteId'),
    term: readLong(o, 'term', -1),
  };
}

export function decodeBase(body: Buffer | undefined): DLedgerBase {
  return readBase(parseBody(body));
}

export function decodeVoteRequest(body: Buffer | undefined): VoteRequest {
  const o = parseBody(body);
  return { ...readBase(o), ledgerEndIndex: readLong(o, 'ledgerEndIndex', -1), ledgerEndTerm: readLong(o, 'ledgerEndTerm', -1) };
}

export function decodeVoteResponse(body: Buffer | undefined): VoteResponse {
  const o = parseBody(body);
  return { ...readBase(o), voteResult: readEnum(o, 'voteResult', VOTE_RESULTS, 'UNKNOWN') };
}

export function decodeAppendEntryRequest(body: Buffer | undefined): AppendEntryRequest {
  const o = parseBody(body);
  return { ...readBase(o), body: readBytes(o, 'body') };
}

export function decodeAppendEntryResponse(body: Buffer | undefined): AppendEntryResponse {
  const o = parseBody(body);
  return { ...readBase(o), index: readLong(o, 'index', -1), pos: readLong(o, 'pos', -1) };
}

export function decodeGetEntriesRequest(body: Buffer | undefined): GetEntriesRequest {
  const o = parseBody(body);
  return { ...readBase(o), beginIndex: readOptLong(o, 'beginIndex'), maxSize: readLong(o, 'maxSize', 0), indexList: readLongList(o, 'indexList') };
}

export function decodeGetEntriesResponse(body: Buffer | undefined): GetEntriesResponse {
  const o = parseBody(body);
  return { ...readBase(o), entries: readEntryList(o, 'entries') };
}

export function decodeMetadataResponse(body: Buffer | undefined): MetadataResponse {
  const o = parseBody(body);
  return { ...readBase(o), peers: readStringMap(o, 'peers') };
}

export function decodePullEntriesRequest(body: Buffer | undefined): PullEntriesRequest {
  const o = parseBody(body);
  return { ...readBase(o), beginIndex: readOptLong(o, 'beginIndex'), nodeId: readString(o, 'nodeId') };
}

/** Derived getters (batch, count, firstEntryIndex, lastEntryIndex, totalSize) are not read: Java has no setters. */
export function decodePushEntryRequest(body: Buffer | undefined): PushEntryRequest {
  const o = parseBody(body);
  return {
    ...readBase(o),
    commitIndex: readLong(o, 'commitIndex', -1),
    type: readEnum(o, 'type', PUSH_TYPES, 'APPEND'),
    entry: readOptEntry(o, 'entry'),
    batchEntry: readEntryList(o, 'batchEntry'),
  };
}

export function decodePushEntryResponse(body: Buffer | undefined): PushEntryResponse {
  const o = parseBody(body);
  return {
    ...readBase(o),
    index: readOptLong(o, 'index'),
    beginIndex: readLong(o, 'beginIndex', 0),
    endIndex: readLong(o, 'endIndex', 0),
    count: readLong(o, 'count', 0),
  };
}

export function decodeLeadershipTransferRequest(body: Buffer | undefined): LeadershipTransferRequest {
  const o = parseBody(body);
  return {
    ...readBase(o),
    transferId: readString(o, 'transferId'),
    transfereeId: readString(o, 'transfereeId'),
    takeLeadershipLedgerIndex: readLong(o, 'takeLeadershipLedgerIndex', 0),
  };
}

// ---- PushEntryRequest's derived getters ------------------------------------------------------------------------

export function pushFirstIndex(r: PushEntryRequest): number {
  if (r.batchEntry.length > 0) return r.batchEntry[0]!.index;
  return r.entry ? r.entry.index : -1;
}

export function pushLastIndex(r: PushEntryRequest): number {
  if (r.batchEntry.length > 0) return r.batchEntry[r.batchEntry.length - 1]!.index;
  return r.entry ? r.entry.index : -1;
}

export function pushCount(r: PushEntryRequest): number {
  if (r.batchEntry.length > 0) return r.batchEntry.length;
  return r.entry ? 1 : 0;
}

// ---- writing -----------------------------------------------------------------------------------------------------

function baseJson(b: DLedgerBase): JsonObject {
  return { code: b.code, group: b.group, leaderId: b.leaderId, localId: b.localId, remoteId: b.remoteId, term: b.term };
}

/** Requests and responses that carry only the base fields (heartbeat, metadata request, transfer response). */
export function encodeBase(b: DLedgerBase): Buffer {
  return writeBody(baseJson(b));
}

export function encodeVoteRequest(r: VoteRequest): Buffer {
  return writeBody({ ...baseJson(r), ledgerEndIndex: r.ledgerEndIndex, ledgerEndTerm: r.ledgerEndTerm });
}

export function encodeVoteResponse(r: VoteResponse): Buffer {
  return writeBody({ ...baseJson(r), voteResult: r.voteResult });
}

export function encodeAppendEntryRequest(r: AppendEntryRequest): Buffer {
  return writeBody({ ...baseJson(r), body: r.body });
}

export function encodeAppendEntryResponse(r: AppendEntryResponse): Buffer {
  return writeBody({ ...baseJson(r), index: r.index, pos: r.pos });
}

export function encodeGetEntriesRequest(r: GetEntriesRequest): Buffer {
  return writeBody({ ...baseJson(r), beginIndex: r.beginIndex, maxSize: r.maxSize, indexList: r.indexList });
}

export function encodeGetEntriesResponse(r: GetEntriesResponse | PullEntriesResponse): Buffer {
  return writeBody({ ...baseJson(r), entries: r.entries.map(entryJson) });
}

/** The peers map is written in Java HashMap order, as the official node's MemberState map iterates. */
export function encodeMetadataResponse(r: MetadataResponse): Buffer {
  let peers: Map<string, string> | null = null;
  if (r.peers) {
    peers = new Map();
    for (const id of javaHashMapOrder([...r.peers.keys()])) peers.set(id, r.peers.get(id)!);
  }
  return writeBody({ ...baseJson(r), peers });
}

export function encodePullEntriesRequest(r: PullEntriesRequest): Buffer {
  return writeBody({ ...baseJson(r), beginIndex: r.beginIndex, nodeId: r.nodeId });
}

/** With the derived getters fastjson also writes: batch, count, firstEntryIndex, lastEntryIndex, totalSize. */
export function encodePushEntryRequest(r: PushEntryRequest): Buffer {
  let totalSize = 0;
  for (const e of r.batchEntry) totalSize += e.size;
  return writeBody({
    ...baseJson(r),
    batch: r.batchEntry.length > 0,
    batchEntry: r.batchEntry.map(entryJson),
    commitIndex: r.commitIndex,
    count: pushCount(r),
    entry: r.entry ? entryJson(r.entry) : null,
    firstEntryIndex: pushFirstIndex(r),
    lastEntryIndex: pushLastIndex(r),
    totalSize,
    type: r.type,
  });
}

export function encodePushEntryResponse(r: PushEntryResponse): Buffer {
  return writeBody({ ...baseJson(r), beginIndex: r.beginIndex, count: r.count, endIndex: r.endIndex, index: r.index });
}

export function encodeLeadershipTransferRequest(r: LeadershipTransferRequest): Buffer {
  return writeBody({
    ...baseJson(r),
    takeLeadershipLedgerIndex: r.takeLeadershipLedgerIndex,
    transferId: r.transferId,
    transfereeId: r.transfereeId,
  });
}
