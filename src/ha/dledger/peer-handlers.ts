// The eight request codes served on the peer port (D/DLedgerServer.handle*, D/DLedgerRpcNettyService.processRequest;
// protocol/dledger.md §1.7). Every handler first checks remoteId == self (UNKNOWN_MEMBER 401) and group (UNKNOWN_GROUP
// 400); such refusals copy the request's base fields, with our known leader, as DLedgerServer's catch blocks do.
import { DLedgerRequestCode, DLedgerResponseCode } from './codes.js';
import { DLedgerBodyError } from './json.js';
import type { Elector } from './elector.js';
import type { FollowerHandler } from './follower.js';
import type { PeerRpcServer } from './peer-rpc.js';
import {
  type AppendEntryResponse,
  type DLedgerBase,
  type GetEntriesResponse,
  type PushEntryResponse,
  baseDefaults,
  copyBase,
  decodeAppendEntryRequest,
  decodeBase,
  decodeGetEntriesRequest,
  decodeLeadershipTransferRequest,
  decodePullEntriesRequest,
  decodePushEntryRequest,
  decodeVoteRequest,
  encodeAppendEntryResponse,
  encodeBase,
  encodeGetEntriesResponse,
  encodeMetadataResponse,
  encodePushEntryResponse,
  encodeVoteResponse,
} from './protocol.js';
import type { LeadershipTransfer } from './transfer.js';
import type { DLedgerNodePort } from './types.js';

/** What the handlers reach of the node (DLedgerNode; an interface here so the two files do not import each other). */
export interface PeerHandlerTarget extends Pick<DLedgerNodePort, 'group' | 'selfId' | 'peers' | 'role' | 'currTerm' | 'leaderId' | 'store' | 'append'> {
  readonly elector: Elector;
  readonly follower: FollowerHandler;
  readonly transfer: LeadershipTransfer;
}

/** The refusal code for a request not meant for this member, or null when it is. */
function checkAddressed(node: PeerHandlerTarget, req: DLedgerBase): number | null {
  if (req.remoteId !== node.selfId) return DLedgerResponseCode.UNKNOWN_MEMBER;
  if (req.group !== node.group) return DLedgerResponseCode.UNKNOWN_GROUP;
  return null;
}

/** DLedgerServer's error shape: the request's base fields, the code, our known leader. */
function refusal(node: PeerHandlerTarget, req: DLedgerBase, code: number): DLedgerBase {
  return { ...copyBase(req), code, leaderId: node.leaderId };
}

export function registerPeerHandlers(server: PeerRpcServer, node: PeerHandlerTarget): void {
  server.handle(DLedgerRequestCode.METADATA, (body) => {
    const req = decodeBase(body);
    const bad = checkAddressed(node, req);
    if (bad !== null) return encodeMetadataResponse({ ...refusal(node, req, bad), peers: null });
    return encodeMetadataResponse({ ...baseDefaults(), group: node.group, leaderId: node.leaderId, peers: new Map(node.peers) });
  });

  server.handle(DLedgerRequestCode.VOTE, (body) => {
    const req = decodeVoteRequest(body);
    const bad = checkAddressed(node, req);
    if (bad !== null) return encodeVoteResponse({ ...refusal(node, req, bad), voteResult: 'UNKNOWN' });
    return encodeVoteResponse(node.elector.handleVote(req, false));
  });

  server.handle(DLedgerRequestCode.HEART_BEAT, (body, channel) => {
    const req = decodeBase(body);
    const bad = checkAddressed(node, req);
    if (bad !== null) return encodeBase(refusal(node, req, bad));
    return encodeBase(node.elector.handleHeartBeat(req, channel));
  });

  server.handle(DLedgerRequestCode.PUSH, async (body) => {
    const req = decodePushEntryRequest(body);
    const bad = checkAddressed(node, req);
    const refuse = (code: number): Buffer =>
      encodePushEntryResponse({ ...refusal(node, req, code), index: null, beginIndex: 0, endIndex: 0, count: 0 } satisfies PushEntryResponse);
    if (bad !== null) return refuse(bad);
    // An unknown type (0.4.0's INSTALL_SNAPSHOT) parses to null and the official node fails with an NPE.
    if (req.type === null) throw new DLedgerBodyError('push type unknown to DLedger 0.3.1.2');
    if (req.type === 'APPEND' ? req.entry === null && req.batchEntry.length === 0 : req.type !== 'COMMIT' && req.entry === null) {
      return refuse(DLedgerResponseCode.UNEXPECTED_ARGUMENT);
    }
    const res = await node.follower.handlePush(req);
    return res ? encodePushEntryResponse(res) : null;
  });

  server.handle(DLedgerRequestCode.APPEND, async (body) => {
    const req = decodeAppendEntryRequest(body);
    const bad = checkAddressed(node, req);
    const refuse = (code: number): Buffer =>
      encodeAppendEntryResponse({ ...refusal(node, req, code), index: -1, pos: -1 } satisfies AppendEntryResponse);
    if (bad !== null) return refuse(bad);
    // D/DLedgerServer.handleAppend: the DLedger client's append (brokers append in-process instead).
    const { appended, acked } = node.append(req.body ?? Buffer.alloc(0));
    const r = await acked;
    if (!appended) {
      if (r.code === DLedgerResponseCode.LEADER_PENDING_FULL) {
        return encodeAppendEntryResponse({ ...baseDefaults(), group: node.group, code: r.code, term: node.currTerm, leaderId: node.selfId, index: -1, pos: -1 });
      }
      return refuse(r.code);
    }
    return encodeAppendEntryResponse({
      ...baseDefaults(),
      group: node.group,
      code: r.code,
      term: appended.term,
      leaderId: node.selfId,
      index: r.index,
      pos: r.code === DLedgerResponseCode.SUCCESS ? r.pos : -1,
    });
  });

  server.handle(DLedgerRequestCode.GET, (body) => {
    const req = decodeGetEntriesRequest(body);
    const bad = checkAddressed(node, req);
    const refuse = (code: number): Buffer => encodeGetEntriesResponse({ ...refusal(node, req, code), entries: [] } satisfies GetEntriesResponse);
    if (bad !== null) return refuse(bad);
    if (node.role !== 'LEADER') return refuse(DLedgerResponseCode.NOT_LEADER);
    if (req.beginIndex === null) throw new DLedgerBodyError('beginIndex is null');
    const index = req.beginIndex;
    if (index < 0 || index > node.store.endIndex) return refuse(DLedgerResponseCode.INDEX_OUT_OF_RANGE);
    if (index < node.store.beginIndex) return refuse(DLedgerResponseCode.INDEX_LESS_THAN_LOCAL_BEGIN);
    const entry = node.store.get(index);
    return encodeGetEntriesResponse({ ...baseDefaults(), group: node.group, entries: entry ? [entry] : [] });
  });

  server.handle(DLedgerRequestCode.PULL, (body) => {
    decodePullEntriesRequest(body);
    // D/DLedgerServer.handlePull returns null and the remoting layer answers SYSTEM_ERROR: replication is push-only.
    throw new DLedgerBodyError('PULL is not served by DLedger 0.3.1.2');
  });

  server.handle(DLedgerRequestCode.LEADERSHIP_TRANSFER, async (body) => {
    const req = decodeLeadershipTransferRequest(body);
    const bad = checkAddressed(node, req);
    if (bad !== null) return encodeBase(refusal(node, req, bad));
    return encodeBase(await node.transfer.handle(req));
  });
}
