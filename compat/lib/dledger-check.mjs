// The checker of compat/dledger-faults.mjs, run once the group is quiet and every member has committed the same
// position: every acknowledged message where its SEND_OK put it, no queue offset holding two different acknowledged
// messages, each queue's acknowledgements in queue-offset order, and the members' DLedger data files byte-identical
// up to the leader's committed position (a crash may leave an uncommitted tail beyond it on some member).
import { IDS } from './dledger-group.mjs';
import { Code, decodeRecord, firstDifference, phyOffsetOf, sleep } from './ha-tools.mjs';

/**
 * @param group   a DLedgerGroup, quiet, every member caught up
 * @param master  the master's address (brokerId 0 in the route)
 * @param acked   [{ body, queueId, queueOffset, msgId, sender? }], each sender's in the order its SEND_OKs arrived
 *                (each sender sends one at a time; several senders run concurrently)
 * @returns { failures: string[], figures }
 */
export async function checkGroup(group, master, topic, queues, acked, committedPos) {
  const failures = [];
  const fail = (m) => {
    if (failures.length < 50) failures.push(m);
  };
  // what the master serves, queue by queue
  const stored = new Map(); // `${q}@${offset}` → { body, commitLogOffset }
  let storedCount = 0;
  for (let q = 0; q < queues; q++) {
    const { records } = await group.remote.readQueue(master, topic, q, 'CID_dledger_checker');
    records.forEach((raw, i) => {
      const r = decodeRecord(raw);
      if (r.queueOffset !== i) fail(`queue ${q}: record ${i} has queue offset ${r.queueOffset} (offsets must run 0..n-1, none twice)`);
      stored.set(`${q}@${r.queueOffset}`, { body: r.body.toString('utf8'), commitLogOffset: r.commitLogOffset });
    });
    storedCount += records.length;
  }
  // every acknowledged message at its queue and offset, with its body; the offset msgId names the record's position
  const byKey = new Map();
  for (const a of acked) {
    const key = `${a.queueId}@${a.queueOffset}`;
    const other = byKey.get(key);
    if (other !== undefined && other !== a.body) fail(`${key} acknowledged for two messages: ${other} and ${a.body}`);
    byKey.set(key, a.body);
    const s = stored.get(key);
    if (!s) fail(`${a.body} acknowledged at ${key} (msgId ${a.msgId}): nothing there on the master`);
    else if (s.body !== a.body) fail(`${a.body} acknowledged at ${key}: the master holds ${s.body} there`);
    else if (a.msgId && phyOffsetOf(a.msgId) !== s.commitLogOffset) {
      fail(`${a.body} at ${key}: msgId ${a.msgId} names ${phyOffsetOf(a.msgId)}, the record is at ${s.commitLogOffset}`);
    }
  }
  // each sender sent one at a time: within a queue, its later SEND_OKs carry larger offsets (two senders' SEND_OKs
  // interleave in any order)
  const lastOffset = new Map();
  const perSender = {};
  for (const a of acked) {
    const key = `${a.sender ?? ''}/${a.queueId}`;
    perSender[a.sender ?? 'sender'] = (perSender[a.sender ?? 'sender'] ?? 0) + 1;
    const prev = lastOffset.get(key);
    if (prev !== undefined && a.queueOffset <= prev) fail(`queue ${a.queueId}: ${a.body} acknowledged at ${a.queueOffset} after ${prev}${a.sender ? ` (sender ${a.sender})` : ''}`);
    lastOffset.set(key, a.queueOffset);
  }
  // the members' DLedger data files, byte for byte, from 0 to the committed position
  const leaderId = group.idOf(master);
  const compared = [];
  for (const id of IDS) {
    if (id === leaderId) continue;
    try {
      const at = firstDifference(group.dataDir(leaderId), group.dataDir(id), group.fileBytes, 0, committedPos);
      if (at >= 0) fail(`DLedger data of ${id} differs from the leader ${leaderId}'s at byte ${at} (committed position ${committedPos})`);
      compared.push(`${leaderId}=${id}${at >= 0 ? ` differs at ${at}` : ''}`);
    } catch (e) {
      fail(`DLedger data of ${id} vs ${leaderId}: ${e.message}`);
    }
  }
  const bySender = Object.keys(perSender).length > 1 ? { ackedBySender: perSender } : {};
  return { failures, figures: { acked: acked.length, ...bySender, stored: storedCount, committedPos, compared: compared.join(', ') } };
}

/** ResponseCode.TOPIC_NOT_EXIST */
const TOPIC_NOT_EXIST = 17;

/**
 * Every record of a queue on member `id`. An official 5.3.3 slave's metadata sync (SlaveSynchronize.syncTopicConfig)
 * deletes every topic and puts the master's back whenever the data versions differ — and each delete bumps its own
 * version, so every sync does it again: a pull in that moment answers TOPIC_NOT_EXIST. Such a pull is repeated (20
 * times at most); on our members it is a failure like any other answer.
 */
async function readMember(group, id, topic, q, consumerGroup, counts) {
  const records = [];
  let from = 0;
  for (let retries = 0; ; retries++) {
    const r = await group.remote.readQueue(group.addr(id), topic, q, consumerGroup, from);
    records.push(...r.records);
    from = r.next;
    if (r.lastCode !== TOPIC_NOT_EXIST || group.kindOf(id) === 'ours' || retries >= 20) return { records, lastCode: r.lastCode };
    counts.topicNotExist++;
    await sleep(100);
  }
}

/**
 * Reads from every member return the master's bytes: each queue pulled from 0 on every member (slaveReadEnable)
 * equals the master's records byte for byte, and the offset msgId of every `viewEvery`-th acknowledged message
 * viewed on every member (VIEW_MESSAGE_BY_ID) equals the master's answer.
 * @returns { failures: string[], figures: { records, views, topicNotExist } }
 */
export async function compareReads(group, master, topic, queues, acked, viewEvery = 25) {
  const failures = [];
  const fail = (m) => {
    if (failures.length < 50) failures.push(m);
  };
  const members = IDS.map((id) => [id, group.addr(id)]);
  const masterId = group.idOf(master);
  const counts = { topicNotExist: 0 };
  let records = 0;
  for (let q = 0; q < queues; q++) {
    const want = (await readMember(group, masterId, topic, q, 'CID_dledger_reads', counts)).records;
    records += want.length;
    for (const [id] of members) {
      if (id === masterId) continue;
      const { records: got, lastCode } = await readMember(group, id, topic, q, 'CID_dledger_reads', counts);
      const at = want.findIndex((r, i) => !got[i] || !r.equals(got[i]));
      if (got.length !== want.length || at >= 0) {
        fail(`queue ${q} on ${id} (${group.kindOf(id)}): ${got.length} records (last answer ${lastCode}), the master has ${want.length}` +
          `${at >= 0 ? `; first different record ${at}` : ''}`);
      }
    }
  }
  let views = 0;
  for (const a of acked.filter((_, i) => i % viewEvery === 0)) {
    const offset = String(phyOffsetOf(a.msgId));
    const answers = await Promise.all(members.map(([, addr]) => group.remote.request(addr, Code.VIEW_MESSAGE_BY_ID, { topic, offset })));
    const ref = answers[members.findIndex(([id]) => id === masterId)];
    members.forEach(([id], i) => {
      const r = answers[i];
      if (r.code !== 0 || !ref?.body || !r.body?.equals(ref.body)) fail(`msgId ${a.msgId} on ${id}: ${r.code} ${r.remark ?? ''}, not the master's bytes`);
    });
    views++;
  }
  return { failures, figures: { records, views, members: members.length, topicNotExist: counts.topicNotExist } };
}
