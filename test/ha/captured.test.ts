// HA-port bytes captured between official brokers (compat/capture/capture-ha.mjs; protocol/ha/*.json), read back
// with our readers: the slave's reports and the master's frames as the official peers wrote them.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FrameReader, MAX_FRAME_BODY_BYTES, ReportReader } from '../../src/ha/protocol.js';
import { decodeRecord } from '../../src/store/index.js';

const DIR = path.resolve(import.meta.dirname, '../../protocol/ha');
const files = fs.existsSync(DIR) ? fs.readdirSync(DIR).filter((f) => f.endsWith('.json')) : [];

interface Capture {
  master: string;
  slave: string;
  masterLogEnd: number;
  chunks: Array<{ dir: string; ms: number; hex: string }>;
}

describe.each(files)('captured %s', (file) => {
  const cap = JSON.parse(fs.readFileSync(path.join(DIR, file), 'utf8')) as Capture;
  const stream = (dir: string) => cap.chunks.filter((c) => c.dir === dir).map((c) => ({ ms: c.ms, bytes: Buffer.from(c.hex, 'hex') }));

  it('the slave reports its log end in 8-byte values: 0 first (empty), growing to the master\'s end', () => {
    const reports: number[] = [];
    const reader = new ReportReader();
    for (const c of stream('slave→master')) reader.push(c.bytes, (v) => (reports.push(v), true));
    expect(reader.pendingBytes).toBe(0);
    expect(reports[0]).toBe(0);
    for (let i = 1; i < reports.length; i++) expect(reports[i]).toBeGreaterThanOrEqual(reports[i - 1]!);
    expect(reports[reports.length - 1]).toBe(cap.masterLogEnd);
  });

  it('the master ships contiguous frames of whole records from 0, heartbeats at the next offset', () => {
    const frames: Array<{ offset: number; body: Buffer }> = [];
    const reader = new FrameReader(MAX_FRAME_BODY_BYTES, (reason) => {
      throw new Error(reason);
    });
    for (const c of stream('master→slave')) {
      reader.push(c.bytes, { onHeader: () => true, onFrame: (offset, body) => (frames.push({ offset, body: Buffer.concat(body) }), true) });
    }
    let next = 0;
    let heartbeats = 0;
    const log: Buffer[] = [];
    for (const f of frames) {
      expect(f.offset).toBe(next);
      expect(f.body.length).toBeLessThanOrEqual(32768);
      if (f.body.length === 0) heartbeats++;
      log.push(f.body);
      next += f.body.length;
    }
    expect(next).toBe(cap.masterLogEnd);
    expect(heartbeats).toBeGreaterThan(0);
    const all = Buffer.concat(log);
    for (let pos = 0; pos < all.length; ) {
      const rec = decodeRecord(all, pos);
      expect(rec.commitLogOffset).toBe(pos);
      pos += rec.totalSize;
    }
  });
});

it('protocol/ha holds captures', () => {
  expect(files.length).toBeGreaterThan(0);
});
