// Helpers for the index tests: an independent model of Java's IndexFile.putKey, and readers of index files.
import fs from 'node:fs';
import path from 'node:path';
import { decodeRecord, readInt64 } from '../../src/store/index.js';
import type { DefaultMessageStore } from '../../src/store/message-store.js';
import { javaStringHashCode } from '../../src/common/java-hash.js';

export interface IndexHeader {
  beginTimestamp: number;
  endTimestamp: number;
  beginPhyOffset: number;
  endPhyOffset: number;
  hashSlotCount: number;
  indexCount: number;
}

export interface RawEntry {
  keyHash: number;
  phyOffset: number;
  timeDiff: number;
  prevIndex: number;
}

/** Java: abs(String.hashCode), 0 if still negative. Written out separately from the code under test. */
export function javaKeyHash(key: string): number {
  const h = javaStringHashCode(key);
  const abs = h < 0 ? (-h | 0) : h;
  return abs < 0 ? 0 : abs;
}

/** Model of one Java IndexFile (slots and entries as plain arrays). */
export class ModelIndexFile {
  header: IndexHeader = { beginTimestamp: 0, endTimestamp: 0, beginPhyOffset: 0, endPhyOffset: 0, hashSlotCount: 0, indexCount: 1 };
  slots: number[];
  entries: RawEntry[] = [];

  constructor(readonly slotNum: number, readonly indexNum: number, prevEndPhy = 0, prevEndTs = 0) {
    this.slots = new Array<number>(slotNum).fill(0);
    if (prevEndPhy > 0) this.header.beginPhyOffset = this.header.endPhyOffset = prevEndPhy;
    if (prevEndTs > 0) this.header.beginTimestamp = this.header.endTimestamp = prevEndTs;
  }

  put(key: string, phy: number, ts: number): boolean {
    const h = this.header;
    if (h.indexCount >= this.indexNum) return false;
    const keyHash = javaKeyHash(key);
    const slot = keyHash % this.slotNum;
    let slotValue = this.slots[slot]!;
    if (slotValue <= 0 || slotValue > h.indexCount) slotValue = 0;
    let diff = Math.trunc((ts - h.beginTimestamp) / 1000);
    if (h.beginTimestamp <= 0) diff = 0;
    else if (diff > 0x7fffffff) diff = 0x7fffffff;
    else if (diff < 0) diff = 0;
    this.entries[h.indexCount] = { keyHash, phyOffset: phy, timeDiff: diff, prevIndex: slotValue };
    this.slots[slot] = h.indexCount;
    if (h.indexCount <= 1) {
      h.beginPhyOffset = phy;
      h.beginTimestamp = ts;
    }
    h.hashSlotCount++;
    h.indexCount++;
    h.endPhyOffset = phy;
    h.endTimestamp = ts;
    return true;
  }
}

/** Model of the file list (IndexService.buildIndex for one message). */
export class ModelIndex {
  files: ModelIndexFile[] = [];
  constructor(readonly slotNum: number, readonly indexNum: number) {}

  put(topic: string, keys: string[], phy: number, ts: number): void {
    let f = this.files[this.files.length - 1];
    if (!f || f.header.indexCount >= this.indexNum) f = this.roll(f);
    for (const k of keys) {
      while (!f.put(`${topic}#${k}`, phy, ts)) f = this.roll(f);
    }
  }

  private roll(prev: ModelIndexFile | undefined): ModelIndexFile {
    const f = new ModelIndexFile(this.slotNum, this.indexNum, prev?.header.endPhyOffset ?? 0, prev?.header.endTimestamp ?? 0);
    this.files.push(f);
    return f;
  }
}

export function indexDir(root: string): string {
  return path.join(root, 'index');
}

export function indexFileNames(root: string): string[] {
  const dir = indexDir(root);
  return fs.existsSync(dir) ? fs.readdirSync(dir).sort() : [];
}

export interface ParsedIndexFile {
  size: number;
  header: IndexHeader;
  slots: number[];
  /** Entries 1 .. indexCount-1 (index 0 unused). */
  entries: RawEntry[];
  raw: Buffer;
}

/** Reads a whole (small) index file by Java's layout. */
export function readIndexFile(file: string, slotNum: number): ParsedIndexFile {
  const raw = fs.readFileSync(file);
  const header: IndexHeader = {
    beginTimestamp: readInt64(raw, 0),
    endTimestamp: readInt64(raw, 8),
    beginPhyOffset: readInt64(raw, 16),
    endPhyOffset: readInt64(raw, 24),
    hashSlotCount: raw.readInt32BE(32),
    indexCount: raw.readInt32BE(36),
  };
  const slots: number[] = [];
  for (let s = 0; s < slotNum; s++) slots.push(raw.readInt32BE(40 + 4 * s));
  const entries: RawEntry[] = [];
  const base = 40 + 4 * slotNum;
  for (let n = 1; n < header.indexCount; n++) {
    const p = base + 20 * n;
    entries[n] = { keyHash: raw.readInt32BE(p), phyOffset: readInt64(raw, p + 4), timeDiff: raw.readInt32BE(p + 12), prevIndex: raw.readInt32BE(p + 16) };
  }
  return { size: raw.length, header, slots, entries, raw };
}

/** Bodies (utf8) of a key query, in the order returned. */
export async function queryBodies(
  store: DefaultMessageStore, topic: string, key: string, maxNum = 32, begin = 0, end = Date.now() + 3_600_000,
): Promise<string[]> {
  const r = await store.queryMessage(topic, key, maxNum, begin, end);
  return r.records.map((b) => decodeRecord(b).body.toString());
}
