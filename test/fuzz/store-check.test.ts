// The fuzz's offline store check (store-check.ts) on a store the real broker wrote: it finds nothing wrong with it,
// and it finds each kind of damage put into a copy of it by hand.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/common/logger.js';
import { ResponseCode } from '../../src/common/response-code.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { createTopic, startTestServer, tempDir } from '../helpers/server.js';
import { rawSend } from '../durability/helpers.js';
import { checkStoreOffline } from './store-check.js';

const MESSAGES = 300;
const QUEUES = 4;
const CQ_FILE_BYTES = 20 * 16;

describe('offline store check', () => {
  const storeDir = tempDir('store-check');
  const copies: string[] = [];
  /** Where each message went: [queueId, queueOffset]. */
  const sent: Array<[number, number]> = [];

  beforeAll(async () => {
    const server = await startTestServer({
      storePathRootDir: storeDir, mappedFileSizeCommitLog: 128 * 1024, mappedFileSizeConsumeQueue: CQ_FILE_BYTES,
    });
    const client = new RemotingClient(silentLogger());
    try {
      await createTopic(server, 'CheckedT', QUEUES);
      for (let i = 0; i < MESSAGES; i++) {
        const res = await rawSend(client, server.brokerAddr, 'CheckedT', i % QUEUES, Buffer.alloc(700 + (i % 50), 97 + (i % 26)));
        expect(res.code, res.remark).toBe(ResponseCode.SUCCESS);
        sent.push([i % QUEUES, Number(res.extFields.queueOffset)]);
      }
    } finally {
      await client.close();
      await server.stop();
    }
  });
  afterAll(() => {
    for (const d of [storeDir, ...copies]) fs.rmSync(d, { recursive: true, force: true });
  });

  /** A copy of the store's commit log and consume queues (all the check reads) with `damage` done to it. */
  const damaged = (damage: (dir: string) => void): string => {
    const dir = tempDir('store-check-copy');
    copies.push(dir);
    for (const sub of ['commitlog', 'consumequeue']) fs.cpSync(path.join(storeDir, sub), path.join(dir, sub), { recursive: true });
    damage(dir);
    return dir;
  };
  const logFiles = (dir: string) => fs.readdirSync(path.join(dir, 'commitlog')).sort();
  const cqFile = (dir: string, queueId: number, n: number) => {
    const qdir = path.join(dir, 'consumequeue', 'CheckedT', String(queueId));
    return path.join(qdir, fs.readdirSync(qdir).sort()[n]!);
  };
  const patch = (file: string, at: number, bytes: Buffer) => {
    const fd = fs.openSync(file, 'r+');
    fs.writeSync(fd, bytes, 0, bytes.length, at);
    fs.closeSync(fd);
  };

  it('passes the store as the broker left it: every record and entry checked', () => {
    expect(logFiles(storeDir).length).toBeGreaterThan(2); // records across files, each ended by its filler
    const report = checkStoreOffline(storeDir);
    expect(report.failures).toEqual([]);
    expect(report.records).toBeGreaterThanOrEqual(MESSAGES);
    expect(report.entries).toBeGreaterThanOrEqual(MESSAGES);
    expect(report.queues).toBeGreaterThanOrEqual(QUEUES);
    expect(sent.filter(([q]) => q === 0).map(([, o]) => o)).toEqual([...Array(MESSAGES / QUEUES).keys()]);
  });

  it('finds a changed body byte (CRC)', () => {
    const dir = damaged((d) => patch(path.join(d, 'commitlog', logFiles(d)[1]!), 200, Buffer.from('#')));
    expect(checkStoreOffline(dir).failures.join('\n')).toMatch(/body CRC/);
  });

  it('finds an entry that points into the middle of a record', () => {
    const dir = damaged((d) => {
      const file = cqFile(d, 1, 1);
      const entry = fs.readFileSync(file).subarray(0, 20);
      entry.writeBigInt64BE(entry.readBigInt64BE(0) + 8n, 0);
      patch(file, 0, entry);
    });
    expect(checkStoreOffline(dir).failures.join('\n')).toMatch(/CheckedT:1 entry 16 points at log offset \d+, where no record starts/);
  });

  it('finds two entries swapped (each points at another queue offset)', () => {
    const dir = damaged((d) => {
      const file = cqFile(d, 2, 0);
      const two = fs.readFileSync(file).subarray(40, 80);
      patch(file, 40, Buffer.concat([two.subarray(20), two.subarray(0, 20)]));
    });
    const failures = checkStoreOffline(dir).failures.join('\n');
    expect(failures).toMatch(/CheckedT:2 entry 2 \(size \d+\) points at a record of CheckedT:2 offset 3/);
    expect(failures).toMatch(/CheckedT:2 entry 3 \(size \d+\) points at a record of CheckedT:2 offset 2/);
  });

  it('finds a hole (an empty entry inside a queue)', () => {
    const dir = damaged((d) => patch(cqFile(d, 3, 1), 20 * 5, Buffer.alloc(20)));
    expect(checkStoreOffline(dir).failures.join('\n')).toMatch(/CheckedT:3 entry 22 follows an empty entry at 21/);
  });

  it('finds a queue whose last message has no entry', () => {
    const last = MESSAGES / QUEUES - 1; // 74: file 4, entry 10
    const dir = damaged((d) => patch(cqFile(d, 0, Math.floor(last / 16)), 20 * (last % 16), Buffer.alloc(20)));
    expect(checkStoreOffline(dir).failures.join('\n')).toMatch(/CheckedT:0: the log's last record of the queue \(log offset \d+, queue offset 74\) has no entry/);
  });

  it('finds bytes that are no record where the log goes on', () => {
    const dir = damaged((d) => patch(path.join(d, 'commitlog', logFiles(d)[0]!), 4, Buffer.from([1, 2, 3, 4])));
    expect(checkStoreOffline(dir).failures.join('\n')).toMatch(/log offset 0: magic 1020304 is neither/);
  });
});
