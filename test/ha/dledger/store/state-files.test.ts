// currterm and checkpoint as the official node writes and reads them (protocol/dledger.md §4.6: Java properties
// text, captured `voteLeader=n2\ncurrTerm=1\n` and `committedIndex=2\nendIndex=2\n`).
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  formatCheckpoint,
  formatCurrTerm,
  parseCheckpoint,
  parseCurrTerm,
  parseJavaProperties,
  readCheckpoint,
  readCurrTerm,
  writeCheckpoint,
  writeCurrTerm,
} from '../../../../src/ha/dledger/store/state-files.js';
import { openStore, tempDir } from './helpers.js';

const dirs: string[] = [];
function dir(): string {
  const d = tempDir();
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('Java properties text', () => {
  it('reads separators, comments, escapes and continuations as java.util.Properties does', () => {
    const p = parseJavaProperties(
      '#Tue Dec 01 21:23:53 CST 2026\n! other comment\n  a = 1\nb:2\nc 3\nd=\ne=x\\\n    y\nf=\\u0041\\t\\=\nkey\\ with\\ space=v\r\ng\n',
    );
    expect(Object.fromEntries(p)).toEqual({ a: '1', b: '2', c: '3', d: '', e: 'xy', f: 'A\t=', 'key with space': 'v', g: '' });
  });
});

describe('currterm', () => {
  it('reads the official file in any key order; an empty voteLeader is no vote', () => {
    expect(parseCurrTerm('voteLeader=n2\ncurrTerm=1\n')).toEqual({ currTerm: 1, voteLeader: 'n2' });
    expect(parseCurrTerm('currTerm=12\nvoteLeader=\n')).toEqual({ currTerm: 12, voteLeader: null });
    expect(parseCurrTerm('currTerm=3\n')).toEqual({ currTerm: 3, voteLeader: null });
    expect(parseCurrTerm('voteLeader=n1\n')).toBeNull();
    expect(parseCurrTerm('currTerm=abc\n')).toBeNull();
  });

  it('writes what the official node writes (captured order), with the old content in .bak and no .tmp left', () => {
    expect(formatCurrTerm({ currTerm: 1, voteLeader: 'n2' })).toBe('voteLeader=n2\ncurrTerm=1\n');
    expect(formatCurrTerm({ currTerm: 0, voteLeader: null })).toBe('voteLeader=\ncurrTerm=0\n');
    const d = dir();
    writeCurrTerm(d, { currTerm: 4, voteLeader: 'n0' });
    writeCurrTerm(d, { currTerm: 5, voteLeader: null });
    expect(fs.readFileSync(path.join(d, 'currterm'), 'utf8')).toBe('voteLeader=\ncurrTerm=5\n');
    expect(fs.readFileSync(path.join(d, 'currterm.bak'), 'utf8')).toBe('voteLeader=n0\ncurrTerm=4\n');
    expect(fs.existsSync(path.join(d, 'currterm.tmp'))).toBe(false);
    expect(readCurrTerm(d).term).toEqual({ currTerm: 5, voteLeader: null });
  });

  it('defaults to term 0 without a file; falls back to .tmp / .bak when the file is gone', () => {
    const d = dir();
    expect(readCurrTerm(d)).toEqual({ term: { currTerm: 0, voteLeader: null }, source: null });
    // Java deletes currterm before renaming .tmp over it: a crash in between leaves only .tmp and .bak.
    fs.writeFileSync(path.join(d, 'currterm.bak'), 'voteLeader=n1\ncurrTerm=6\n');
    fs.writeFileSync(path.join(d, 'currterm.tmp'), 'voteLeader=n2\ncurrTerm=7\n');
    expect(readCurrTerm(d).term).toEqual({ currTerm: 7, voteLeader: 'n2' });
  });

  it('the store reads and persists it', () => {
    const d = dir();
    fs.writeFileSync(path.join(d, 'currterm'), 'currTerm=9\nvoteLeader=n3\n');
    const s = openStore(d);
    expect(s.persistedTerm).toEqual({ currTerm: 9, voteLeader: 'n3' });
    s.persistTerm(10, null);
    expect(s.persistedTerm).toEqual({ currTerm: 10, voteLeader: null });
    s.close();
    expect(fs.readFileSync(path.join(d, 'currterm'), 'utf8')).toBe('voteLeader=\ncurrTerm=10\n');
  });
});

describe('checkpoint', () => {
  it('reads and writes the official keys', () => {
    expect(parseCheckpoint('committedIndex=2\nendIndex=2\n')).toEqual({ committedIndex: 2, endIndex: 2, dataMinOffset: null });
    expect(parseCheckpoint('endIndex=-1\ncommittedIndex=-1\n')).toEqual({ committedIndex: -1, endIndex: -1, dataMinOffset: null });
    expect(formatCheckpoint({ committedIndex: 2, endIndex: 2, dataMinOffset: null })).toBe('committedIndex=2\nendIndex=2\n');
    const d = dir();
    expect(readCheckpoint(d)).toBeNull();
    writeCheckpoint(d, { committedIndex: 7, endIndex: 9, dataMinOffset: null });
    expect(readCheckpoint(d)).toEqual({ committedIndex: 7, endIndex: 9, dataMinOffset: null });
  });

  it('the store restores the committed index from it, capped at the end index, and writes it on close', () => {
    const d = dir();
    let s = openStore(d);
    for (let i = 0; i < 5; i++) s.appendAsLeader(Buffer.from(`e${i}`), 1);
    s.close();
    fs.writeFileSync(path.join(d, 'checkpoint'), 'endIndex=4\ncommittedIndex=3\n');
    s = openStore(d);
    expect(s.committedIndex).toBe(3);
    const e3 = s.get(3)!;
    expect(s.committedPos).toBe(e3.pos + e3.size);
    s.close();
    expect(fs.readFileSync(path.join(d, 'checkpoint'), 'utf8')).toBe('committedIndex=3\nendIndex=4\n');
    fs.writeFileSync(path.join(d, 'checkpoint'), 'committedIndex=40\n');
    s = openStore(d);
    expect(s.committedIndex).toBe(4);
    s.close();
  });
});
