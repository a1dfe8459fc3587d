// An offline check of a stopped server's store, written apart from the store's own code so that it can disagree
// with it: every commit-log record is walked (size, magic, body CRC, its own physical offset), and every consume-queue
// entry of every topic on disk must point at the start of a record of that topic, queue and queue offset, with that
// size. The fuzz runs it after the clean shut-down, so the retry, dead-letter, delay, timer, transaction and
// deleted-and-recreated topics the frames wrote are checked too, not only those read back through pulls.
//
// Layouts (Java CommitLog / ConsumeQueue): files named by the byte offset of their first byte; a record is
// TOTALSIZE 4 | MAGIC 4 | BODYCRC 4 | QUEUEID 4 | FLAG 4 | QUEUEOFFSET 8 | PHYSICALOFFSET 8 | SYSFLAG 4 | BORNTIME 8 |
// BORNHOST 8 or 20 | STORETIME 8 | STOREHOST 8 or 20 | RECONSUMETIMES 4 | PREPAREDOFFSET 8 | BODYLEN 4 + body |
// TOPICLEN 1 (2 with the v2 magic) + topic | PROPLEN 2 + properties; a file's unused end starts with
// `int remaining | int BLANK`; a consume-queue entry is `offset int64 | size int32 | tagsCode int64`.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const MAGIC_V1 = 0xdaa320a7;
const MAGIC_V2 = 0xdaa320ab;
const BLANK = 0xcbd43194;
const CQ_ENTRY_BYTES = 20;
/** Java's filler for the entries of a first consume-queue file before its first message. */
const CQ_PLACEHOLDER_SIZE = 0x7fffffff;
/** sysFlag bits: the born / store host is IPv6 (20 bytes instead of 8); the transaction type. */
const BORNHOST_V6 = 0x10;
const STOREHOST_V6 = 0x20;
const TRANSACTION_TYPE = 0xc;
const TRANSACTION_PREPARED = 0x4;
const TRANSACTION_ROLLBACK = 0xc;

export interface StoreCheckReport {
  /** Commit-log bytes walked and the records in them. */
  logBytes: number;
  records: number;
  /** Consume queues found on disk and their entries checked against the log. */
  queues: number;
  entries: number;
  /** Entries pointing below the log's first file (deleted by retention): not checkable. */
  entriesBelowLog: number;
  failures: string[];
}

interface RecordKey {
  topic: string;
  queueId: number;
  queueOffset: number;
  size: number;
  /** Whether the broker puts it in its queue (prepared and rolled-back half messages are not). */
  dispatched: boolean;
}

function filesByOffset(dir: string): Array<{ name: string; start: number }> {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((n) => /^\d{20}$/.test(n)).map((name) => ({ name, start: Number(name) })).sort((a, b) => a.start - b.start);
}

function int64(buf: Buffer, pos: number): number {
  return Number(buf.readBigInt64BE(pos));
}

/**
 * The record at `pos` of `buf` (a file starting at log offset `start`), or a reason it is not one. Only the fields
 * the queues are checked against are kept.
 */
function readRecord(buf: Buffer, pos: number, start: number, magic: number): RecordKey | string {
  const size = buf.readInt32BE(pos);
  if (size < 91 || pos + size > buf.length) return `record size ${size} does not fit`;
  const rec = buf.subarray(pos, pos + size);
  if (int64(rec, 28) !== start + pos) return `its physical offset field says ${int64(rec, 28)}`;
  const sysFlag = rec.readInt32BE(36);
  let p = 48 + (sysFlag & BORNHOST_V6 ? 20 : 8) + 8 + (sysFlag & STOREHOST_V6 ? 20 : 8) + 4 + 8;
  const bodyLength = rec.readInt32BE(p);
  p += 4;
  if (bodyLength < 0 || p + bodyLength > size) return `body length ${bodyLength} does not fit`;
  const crc = (zlib.crc32(rec.subarray(p, p + bodyLength)) & 0x7fffffff) >>> 0;
  if (crc !== rec.readInt32BE(8) >>> 0) return `body CRC ${rec.readInt32BE(8)} but the body's is ${crc}`;
  p += bodyLength;
  const topicLength = magic === MAGIC_V2 ? rec.readUInt16BE(p) : rec.readUInt8(p);
  p += magic === MAGIC_V2 ? 2 : 1;
  const topic = rec.toString('utf8', p, p + topicLength);
  p += topicLength;
  const propertiesLength = p + 2 <= size ? rec.readUInt16BE(p) : -1;
  if (propertiesLength < 0 || p + 2 + propertiesLength !== size) return `its fields add up to ${p + 2 + propertiesLength} bytes, not ${size}`;
  const tx = sysFlag & TRANSACTION_TYPE;
  return {
    topic, queueId: rec.readInt32BE(12), queueOffset: int64(rec, 20), size,
    dispatched: tx !== TRANSACTION_PREPARED && tx !== TRANSACTION_ROLLBACK,
  };
}

/** Walks a stopped server's commit log and consume queues under `storeDir` (see the top of this file). */
export function checkStoreOffline(storeDir: string, maxFailures = 20): StoreCheckReport {
  const report: StoreCheckReport = { logBytes: 0, records: 0, queues: 0, entries: 0, entriesBelowLog: 0, failures: [] };
  const fail = (why: string) => {
    if (report.failures.length < maxFailures) report.failures.push(`store check: ${why}`);
  };
  const records = new Map<number, RecordKey>();
  /** Per "topic queueId": the log offset of its last dispatched record. */
  const lastOfQueue = new Map<string, { offset: number; queueOffset: number }>();
  const logFiles = filesByOffset(path.join(storeDir, 'commitlog'));
  const logStart = logFiles[0]?.start ?? 0;
  let logEnd = -1;
  for (let i = 0; i < logFiles.length; i++) {
    const { name, start } = logFiles[i]!;
    if (i > 0 && start !== logFiles[i - 1]!.start + fs.statSync(path.join(storeDir, 'commitlog', logFiles[i - 1]!.name)).size) {
      fail(`commit-log file ${name} does not start where the one before it ends`);
    }
    const buf = fs.readFileSync(path.join(storeDir, 'commitlog', name));
    let pos = 0;
    while (pos + 8 <= buf.length) {
      const size = buf.readInt32BE(pos);
      const magic = buf.readUInt32BE(pos + 4);
      if (size === 0 && magic === 0) break;
      if (magic === BLANK) {
        pos = buf.length;
        break;
      }
      if (logEnd >= 0) {
        fail(`a record at log offset ${start + pos} after the end of the data at ${logEnd}`);
        break;
      }
      if (magic !== MAGIC_V1 && magic !== MAGIC_V2) {
        fail(`log offset ${start + pos}: magic ${magic.toString(16)} is neither a record's nor the end-of-file filler's`);
        break;
      }
      const rec = readRecord(buf, pos, start, magic);
      if (typeof rec === 'string') {
        fail(`log offset ${start + pos}: ${rec}`);
        break;
      }
      records.set(start + pos, rec);
      if (rec.dispatched) lastOfQueue.set(`${rec.topic} ${rec.queueId}`, { offset: start + pos, queueOffset: rec.queueOffset });
      report.records++;
      pos += size;
    }
    report.logBytes += pos;
    if (pos < buf.length && logEnd < 0) logEnd = start + pos;
  }

  const cqRoot = path.join(storeDir, 'consumequeue');
  const topics = fs.existsSync(cqRoot) ? fs.readdirSync(cqRoot) : [];
  for (const topic of topics) {
    for (const queueDir of fs.readdirSync(path.join(cqRoot, topic))) {
      const queueId = Number(queueDir);
      const files = filesByOffset(path.join(cqRoot, topic, queueDir));
      if (!/^\d+$/.test(queueDir) || files.length === 0) continue;
      report.queues++;
      const where = (index: number) => `${topic}:${queueId} entry ${index}`;
      let seenEntry = false;
      let ended = -1;
      let lastLogOffset = -1;
      for (const { name, start } of files) {
        const buf = fs.readFileSync(path.join(cqRoot, topic, queueDir, name));
        if (start % CQ_ENTRY_BYTES !== 0) fail(`${topic}:${queueId}: file ${name} does not start at an entry`);
        for (let pos = 0; pos + CQ_ENTRY_BYTES <= buf.length; pos += CQ_ENTRY_BYTES) {
          const index = (start + pos) / CQ_ENTRY_BYTES;
          const offset = int64(buf, pos);
          const size = buf.readInt32BE(pos + 8);
          if (offset === 0 && size === 0 && int64(buf, pos + 12) === 0) {
            if (ended < 0) ended = index;
            continue;
          }
          if (ended >= 0) {
            fail(`${where(index)} follows an empty entry at ${ended} (a hole)`);
            ended = -1;
          }
          if (size === CQ_PLACEHOLDER_SIZE && offset === 0) {
            if (seenEntry) fail(`${where(index)} is a filler placeholder after the queue's first message`);
            continue;
          }
          seenEntry = true;
          report.entries++;
          if (offset < logStart) {
            report.entriesBelowLog++;
            continue;
          }
          lastLogOffset = offset;
          const rec = records.get(offset);
          if (!rec) {
            fail(`${where(index)} points at log offset ${offset}, where no record starts`);
          } else if (rec.topic !== topic || rec.queueId !== queueId || rec.queueOffset !== index || rec.size !== size) {
            fail(`${where(index)} (size ${size}) points at a record of ${rec.topic}:${rec.queueId} offset ${rec.queueOffset} (size ${rec.size})`);
          }
        }
      }
      // After a clean stop every dispatched record is in its queue: the queue's last entry is not older than the
      // log's last record of that queue (a deleted and recreated queue starts again at a later record).
      const last = lastOfQueue.get(`${topic} ${queueId}`);
      if (last && last.offset > lastLogOffset) {
        fail(`${topic}:${queueId}: the log's last record of the queue (log offset ${last.offset}, queue offset ${last.queueOffset}) has no entry; the queue's last points at ${lastLogOffset}`);
      }
    }
  }
  return report;
}
