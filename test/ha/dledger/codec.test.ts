// DLedger peer-protocol bodies: the frames captured from three official 5.3.3 members (protocol/dledger.md §1.1,
// §1.5, §1.7) decoded and written again byte for byte, and the lenient reading fastjson does.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FrameDecoder } from '../../../src/remoting/frame-decoder.js';
import type { RemotingCommand } from '../../../src/remoting/command.js';
import { decodeRecord } from '../../../src/store/record.js';
import { DLedgerBodyError, javaHashMapOrder } from '../../../src/ha/dledger/json.js';
import {
  decodeAppendEntryResponse,
  decodeBase,
  decodeGetEntriesResponse,
  decodeMetadataResponse,
  decodePushEntryRequest,
  decodePushEntryResponse,
  decodeVoteRequest,
  decodeVoteResponse,
  encodeAppendEntryResponse,
  encodeBase,
  encodeGetEntriesResponse,
  encodeMetadataResponse,
  encodePushEntryRequest,
  encodePushEntryResponse,
  encodeVoteRequest,
  encodeVoteResponse,
  pushCount,
  pushLastIndex,
  pushFirstIndex,
} from '../../../src/ha/dledger/protocol.js';
import { decodeFrameBody } from '../../../src/remoting/frame-decoder.js';

const buf = (s: string): Buffer => Buffer.from(s, 'utf8');

function roundTrip<T>(text: string, decode: (b: Buffer) => T, encode: (v: T) => Buffer): T {
  const v = decode(buf(text));
  expect(encode(v).toString('utf8')).toBe(text);
  return v;
}

// A 242-byte body standing in for the record the §1.5 capture elides ("body":"…"): the key order, derived getters
// and entry fields are the captured ones; only the base64 text is ours.
const BODY_242 = Buffer.alloc(242, 7);
const CAPTURED_APPEND = `{"batch":false,"batchEntry":[],"code":200,"commitIndex":0,"count":1,"entry":{"body":"${BODY_242.toString('base64')}","bodyCrc":0,"chainCrc":0,"channel":0,"index":1,"magic":1,"pos":290,"size":290,"term":1},"firstEntryIndex":1,"group":"RaftNode00","lastEntryIndex":1,"leaderId":"n2","localId":"n2","remoteId":"n0","term":1,"totalSize":0,"type":"APPEND"}`;
// §1.5: "same keys without entry, count 0, firstEntryIndex/lastEntryIndex −1".
const CAPTURED_COMMIT = '{"batch":false,"batchEntry":[],"code":200,"commitIndex":2,"count":0,"firstEntryIndex":-1,"group":"RaftNode00","lastEntryIndex":-1,"leaderId":"n2","localId":"n2","remoteId":"n0","term":1,"totalSize":0,"type":"COMMIT"}';

describe('DLedger frames captured from official 5.3.3 members', () => {
  it('reads the request and response headers (§1.1)', () => {
    for (const [header, flag] of [
      ['{"code":51002,"flag":0,"language":"JAVA","opaque":11,"serializeTypeCurrentRPC":"JSON","version":479}', 0],
      ['{"code":200,"flag":1,"language":"JAVA","opaque":11,"serializeTypeCurrentRPC":"JSON","version":479}', 1],
    ] as const) {
      const h = buf(header);
      const body = buf('{"code":200,"term":-1}');
      const frame = Buffer.alloc(4 + h.length + body.length);
      frame.writeUInt32BE(h.length, 0);
      h.copy(frame, 4);
      body.copy(frame, 4 + h.length);
      const cmd = decodeFrameBody(frame);
      expect(cmd.flag).toBe(flag);
      expect(cmd.opaque).toBe(11);
      expect(cmd.version).toBe(479);
      expect(cmd.extFields).toEqual({});
      expect(decodeBase(cmd.body).code).toBe(200);
    }
  });

  it('round-trips the heartbeat and transfer answers of table §1.7', () => {
    for (const text of ['{"code":200,"term":-1}', '{"code":403,"term":1}', '{"code":409,"term":-1}', '{"code":401,"term":1}', '{"code":402,"term":1}', '{"code":411,"term":1}']) {
      roundTrip(text, decodeBase, encodeBase);
    }
  });

  it('round-trips the vote refusal for a wrong remoteId', () => {
    const v = roundTrip(
      '{"code":401,"group":"RaftNode00","leaderId":"n2","localId":"n1","remoteId":"n7","term":5,"voteResult":"UNKNOWN"}',
      decodeVoteResponse,
      encodeVoteResponse,
    );
    expect(v.voteResult).toBe('UNKNOWN');
  });

  it('round-trips the push answers (APPEND ok, COMMIT ok, COMPARE on an empty follower)', () => {
    const ok = roundTrip('{"beginIndex":0,"code":200,"count":1,"endIndex":2,"group":"RaftNode00","index":2,"term":1}', decodePushEntryResponse, encodePushEntryResponse);
    expect(ok.index).toBe(2);
    const commit = roundTrip('{"beginIndex":0,"code":200,"count":0,"endIndex":2,"group":"RaftNode00","term":1}', decodePushEntryResponse, encodePushEntryResponse);
    expect(commit.index).toBeNull();
    const cmp = roundTrip('{"beginIndex":-1,"code":406,"count":1,"endIndex":-1,"group":"RaftNode00","index":0,"term":1}', decodePushEntryResponse, encodePushEntryResponse);
    expect(cmp.code).toBe(406);
  });

  it('round-trips an APPEND push with its derived getters, and a COMMIT push', () => {
    const append = roundTrip(CAPTURED_APPEND, decodePushEntryRequest, encodePushEntryRequest);
    expect(append.type).toBe('APPEND');
    expect(append.entry!.body.equals(BODY_242)).toBe(true);
    expect(append.entry!.pos).toBe(290);
    expect(pushFirstIndex(append)).toBe(1);
    expect(pushCount(append)).toBe(1);
    const commit = roundTrip(CAPTURED_COMMIT, decodePushEntryRequest, encodePushEntryRequest);
    expect(commit.type).toBe('COMMIT');
    expect(commit.entry).toBeNull();
    expect(commit.commitIndex).toBe(2);
  });

  it('writes the refusals of GET and APPEND on a follower in their class shapes', () => {
    const get = '{"code":404,"entries":[],"group":"RaftNode00","leaderId":"n2","localId":"n1","remoteId":"n0","term":1}';
    roundTrip(get, decodeGetEntriesResponse, encodeGetEntriesResponse);
    const app = '{"code":404,"group":"RaftNode00","index":-1,"leaderId":"n2","localId":"n1","pos":-1,"remoteId":"n0","term":1}';
    roundTrip(app, decodeAppendEntryResponse, encodeAppendEntryResponse);
  });

  it('writes the metadata peers in Java HashMap order', () => {
    const text = '{"code":200,"group":"RaftNode00","leaderId":"n2","peers":{"n0":"127.0.0.1:40911","n1":"127.0.0.1:40912","n2":"127.0.0.1:40913"},"term":-1}';
    const m = roundTrip(text, decodeMetadataResponse, encodeMetadataResponse);
    expect([...m.peers!.keys()]).toEqual(['n0', 'n1', 'n2']);
    // Buckets of a 16-slot HashMap: String.hashCode, spread (h ^ h>>>16), & 15 → n0 2, n1 3, n2 4, n10 12.
    expect(javaHashMapOrder(['n2', 'n1', 'n0'])).toEqual(['n0', 'n1', 'n2']);
    expect(javaHashMapOrder(['n10', 'n2', 'n1'])).toEqual(['n1', 'n2', 'n10']);
  });
});

describe('DLedger bodies are read leniently, like fastjson parseObject', () => {
  it('ignores unknown keys and keeps the class defaults for missing ones', () => {
    const v = decodeVoteRequest(buf('{"group":"g","leaderId":"n1","extra":{"a":[1,2]},"remoteId":"n0"}'));
    expect(v).toMatchObject({ code: 200, term: -1, ledgerEndIndex: -1, ledgerEndTerm: -1, localId: null });
    const p = decodePushEntryRequest(buf('{"group":"g"}'));
    expect(p).toMatchObject({ type: 'APPEND', commitIndex: -1, entry: null, batchEntry: [] });
  });

  it('takes numeric strings, single quotes and bare keys; an unknown enum name becomes null', () => {
    const v = decodeVoteRequest(buf("{term:'7','ledgerEndIndex':\"3\",group:'g',}"));
    expect(v).toMatchObject({ term: 7, ledgerEndIndex: 3, group: 'g' });
    expect(decodePushEntryRequest(buf('{"type":"INSTALL_SNAPSHOT"}')).type).toBeNull();
    expect(decodeVoteResponse(buf('{"voteResult":"REJECT_SOMETHING_NEW"}')).voteResult).toBeNull();
  });

  it('refuses what fastjson could not map onto the class', () => {
    for (const bad of ['', 'null', '[1]', '{"term":', 'GET / HTTP/1.1', '{"term":{"x":1}}', '{"entry":5}']) {
      expect(() => decodePushEntryRequest(buf(bad)), bad).toThrow(DLedgerBodyError);
    }
    expect(() => decodePushEntryRequest(undefined)).toThrow(DLedgerBodyError);
  });

  it('writes a vote request with every key sorted', () => {
    const body = encodeVoteRequest({
      code: 200, group: 'RaftNode00', leaderId: 'n1', localId: 'n1', remoteId: 'n0', term: 3, ledgerEndIndex: -1, ledgerEndTerm: -1,
    });
    expect(body.toString()).toBe('{"code":200,"group":"RaftNode00","leaderId":"n1","ledgerEndIndex":-1,"ledgerEndTerm":-1,"localId":"n1","remoteId":"n0","term":3}');
  });
});

// Whole frames official members sent our node in the interop run (protocol/vectors/dledger-official-*.json).
const VECTORS = path.resolve(import.meta.dirname, '../../../protocol/vectors');
function capturedFrame(name: string): { frame: Buffer; cmd: RemotingCommand } {
  const v = JSON.parse(fs.readFileSync(path.join(VECTORS, `dledger-official-${name}.json`), 'utf8')) as { frameHex: string; source: string };
  expect(v.source).toMatch(/^captured /);
  const frame = Buffer.from(v.frameHex, 'hex');
  // Through the streaming decoder, cut at every 7 bytes.
  const decoder = new FrameDecoder();
  const out: RemotingCommand[] = [];
  for (let i = 0; i < frame.length; i += 7) decoder.push(frame.subarray(i, i + 7), out);
  expect(out).toHaveLength(1);
  const cmd = out[0]!;
  expect(cmd).toMatchObject({ flag: 0, language: 'JAVA', version: 479, extFields: {} });
  return { frame, cmd };
}

describe('DLedger requests captured from official 5.3.3 members', () => {
  it('vote and heartbeat bodies re-encode byte for byte', () => {
    const vote = capturedFrame('vote-request');
    expect(vote.cmd.code).toBe(51001);
    const v = decodeVoteRequest(vote.cmd.body);
    expect(v).toMatchObject({ leaderId: 'n0', localId: 'n0', remoteId: 'n2', ledgerEndIndex: -1, ledgerEndTerm: -1 });
    expect(encodeVoteRequest(v).equals(vote.cmd.body!)).toBe(true);
    const hb = capturedFrame('heartbeat-request');
    expect(hb.cmd.code).toBe(51002);
    expect(encodeBase(decodeBase(hb.cmd.body)).equals(hb.cmd.body!)).toBe(true);
  });

  it('COMPARE, TRUNCATE, APPEND and COMMIT pushes re-encode byte for byte', () => {
    const types = { 'push-compare-request': 'COMPARE', 'push-truncate-request': 'TRUNCATE', 'push-append-request': 'APPEND', 'push-commit-request': 'COMMIT' };
    for (const [name, type] of Object.entries(types)) {
      const { cmd } = capturedFrame(name);
      expect(cmd.code).toBe(51004);
      const req = decodePushEntryRequest(cmd.body);
      expect(req.type).toBe(type);
      expect(encodePushEntryRequest(req).toString('utf8'), name).toBe(cmd.body!.toString('utf8'));
      if (type === 'COMMIT') {
        expect(req.entry).toBeNull();
        expect(pushLastIndex(req)).toBe(-1);
      } else {
        // The entry's body is the broker's commit-log record; its PHYSICALOFFSET is the entry position + 48.
        const e = req.entry!;
        expect(e.size).toBe(48 + e.body.length);
        expect(decodeRecord(e.body).commitLogOffset).toBe(e.pos + 48);
      }
    }
    const append = decodePushEntryRequest(capturedFrame('push-append-request').cmd.body);
    expect(decodeRecord(append.entry!.body).body.toString()).toBe('hello-again-from-official');
  });
});
