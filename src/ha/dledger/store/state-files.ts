// currterm and checkpoint (protocol/dledger.md §4.6): Java properties text, written whole as `key=value\n` lines
// (D/utils/IOUtils.properties2String, Hashtable order as captured from an official member), replaced through
// `<name>.tmp` + rename after the previous content was copied to `<name>.bak` (IOUtils.string2File).
//
// Ours does better in two places, without changing what the official node reads:
//  - the .tmp file is fdatasync'ed before the rename (and currterm's directory after it): a vote survives a power
//    loss, not only kill -9 (the official node does not sync at all);
//  - a missing or unreadable file falls back to .tmp / .bak instead of "term 0, no vote" (Java deletes the old
//    file before the rename, so a crash in between loses it).
import path from 'node:path';
import { fs } from '../../../store/io.js';

export const CURRTERM_FILE = 'currterm';
export const CHECKPOINT_FILE = 'checkpoint';

/**
 * Parses Java properties text (java.util.Properties.load): `#`/`!` comments, `=`, `:` or whitespace between key
 * and value, backslash escapes and line continuations. Later keys win.
 */
export function parseJavaProperties(text: string): Map<string, string> {
  const out = new Map<string, string>();
  const lines = text.split(/\r\n|\r|\n/);
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!.replace(/^[ \t\f]+/, '');
    if (line === '' || line[0] === '#' || line[0] === '!') continue;
    // A line ending in an odd number of backslashes continues on the next one (its leading blanks dropped).
    while (trailingBackslashes(line) % 2 === 1 && i + 1 < lines.length) {
      line = line.slice(0, -1) + lines[++i]!.replace(/^[ \t\f]+/, '');
    }
    let k = 0;
    while (k < line.length && !'=: \t\f'.includes(line[k]!)) k += line[k] === '\\' ? 2 : 1;
    const key = line.slice(0, k);
    let v = k;
    while (v < line.length && ' \t\f'.includes(line[v]!)) v++;
    if (v < line.length && (line[v] === '=' || line[v] === ':')) v++;
    while (v < line.length && ' \t\f'.includes(line[v]!)) v++;
    out.set(unescape(key), unescape(line.slice(v)));
  }
  return out;
}

function trailingBackslashes(s: string): number {
  let n = 0;
  while (n < s.length && s[s.length - 1 - n] === '\\') n++;
  return n;
}

function unescape(s: string): string {
  if (!s.includes('\\')) return s;
  return s.replace(/\\(u[0-9a-fA-F]{4}|.)/g, (_, c: string) => {
    if (c.length === 5) return String.fromCharCode(parseInt(c.slice(1), 16));
    return c === 't' ? '\t' : c === 'n' ? '\n' : c === 'r' ? '\r' : c === 'f' ? '\f' : c;
  });
}

/** `key=value\n` per pair, in the given order (values are ids and numbers: nothing to escape). */
export function formatProperties(pairs: readonly (readonly [string, string])[]): string {
  let s = '';
  for (const [k, v] of pairs) s += `${k}=${v}\n`;
  return s;
}

function readIfPresent(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/**
 * Replaces `file` with `text` as the official node does (old content to .bak, new content via .tmp + rename), with
 * an fdatasync of the .tmp file first and, when `syncDir`, of the directory after the rename.
 */
export function writeStateFile(file: string, text: string, syncDir: boolean): void {
  const tmp = `${file}.tmp`;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const fd = fs.openSync(tmp, 'w');
  try {
    fs.writeFileSync(fd, text);
    fs.fdatasyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  const previous = readIfPresent(file);
  if (previous !== null) fs.writeFileSync(`${file}.bak`, previous);
  fs.renameSync(tmp, file);
  if (syncDir) {
    const dfd = fs.openSync(path.dirname(file), 'r');
    try {
      fs.fsyncSync(dfd);
    } finally {
      fs.closeSync(dfd);
    }
  }
}

export interface PersistedTerm {
  currTerm: number;
  voteLeader: string | null;
}

/** null when the text has no usable currTerm (MemberState.loadTerm keeps its defaults then). */
export function parseCurrTerm(text: string): PersistedTerm | null {
  const p = parseJavaProperties(text);
  const raw = p.get('currTerm');
  if (raw === undefined) return null;
  const currTerm = parseDecimal(raw);
  if (currTerm === null) return null;
  const vote = p.get('voteLeader');
  return { currTerm, voteLeader: vote === undefined || vote === '' ? null : vote };
}

/** The captured official order: `voteLeader=<id or empty>\ncurrTerm=<n>\n`. */
export function formatCurrTerm(t: PersistedTerm): string {
  return formatProperties([
    ['voteLeader', t.voteLeader ?? ''],
    ['currTerm', String(t.currTerm)],
  ]);
}

/**
 * currterm of `dir`; term 0 and no vote when there is none. When the file is missing or unreadable, the newest
 * readable of .tmp and .bak (the highest term) is used instead.
 */
export function readCurrTerm(dir: string): { term: PersistedTerm; source: string | null } {
  const file = path.join(dir, CURRTERM_FILE);
  const main = readIfPresent(file);
  const parsed = main === null ? null : parseCurrTerm(main);
  if (parsed) return { term: parsed, source: file };
  let best: { term: PersistedTerm; source: string | null } = { term: { currTerm: 0, voteLeader: null }, source: null };
  for (const alt of [`${file}.tmp`, `${file}.bak`]) {
    const text = readIfPresent(alt);
    const t = text === null ? null : parseCurrTerm(text);
    if (t && (best.source === null || t.currTerm > best.term.currTerm)) best = { term: t, source: alt };
  }
  return best;
}

export function writeCurrTerm(dir: string, t: PersistedTerm): void {
  writeStateFile(path.join(dir, CURRTERM_FILE), formatCurrTerm(t), true);
}

export interface Checkpoint {
  committedIndex: number | null;
  endIndex: number | null;
  /**
   * Ours, ignored by the official node: where the data begins when the first data file was rebuilt mid-file
   * (MmapFileList.rebuildWithPos). The official node keeps that only in memory and, after a restart, finds no
   * entry at the file start and truncates everything (§4.7); with this key we recover the entries instead.
   */
  dataMinOffset: number | null;
}

export const CHECKPOINT_DATA_MIN_OFFSET_KEY = 'rocketmqTsDataMinOffset';

export function parseCheckpoint(text: string): Checkpoint {
  const p = parseJavaProperties(text);
  const num = (k: string) => {
    const v = p.get(k);
    return v === undefined ? null : parseDecimal(v);
  };
  return { committedIndex: num('committedIndex'), endIndex: num('endIndex'), dataMinOffset: num(CHECKPOINT_DATA_MIN_OFFSET_KEY) };
}

/** The captured official order `committedIndex=…\nendIndex=…\n`, then our key when there is one. */
export function formatCheckpoint(c: { committedIndex: number; endIndex: number; dataMinOffset: number | null }): string {
  const pairs: [string, string][] = [
    ['committedIndex', String(c.committedIndex)],
    ['endIndex', String(c.endIndex)],
  ];
  if (c.dataMinOffset !== null) pairs.push([CHECKPOINT_DATA_MIN_OFFSET_KEY, String(c.dataMinOffset)]);
  return formatProperties(pairs);
}

/** The checkpoint of `dir`, or null when there is none (the .tmp / .bak fallback as for currterm). */
export function readCheckpoint(dir: string): Checkpoint | null {
  const file = path.join(dir, CHECKPOINT_FILE);
  for (const candidate of [file, `${file}.tmp`, `${file}.bak`]) {
    const text = readIfPresent(candidate);
    if (text === null) continue;
    const c = parseCheckpoint(text);
    if (c.committedIndex !== null) return c;
  }
  return null;
}

export function writeCheckpoint(dir: string, c: { committedIndex: number; endIndex: number; dataMinOffset: number | null }): void {
  writeStateFile(path.join(dir, CHECKPOINT_FILE), formatCheckpoint(c), false);
}

/** Long.valueOf after trim: an optional sign and decimal digits, within JS's exact range. */
function parseDecimal(raw: string): number | null {
  const s = raw.trim();
  if (!/^[+-]?\d+$/.test(s)) return null;
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : null;
}
