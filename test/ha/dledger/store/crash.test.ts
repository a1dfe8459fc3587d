// kill -9 of a process appending to a DLedger store in a loop, four times over the same directory: after every
// crash, every entry the process reported written must be there with its bytes, positions must follow the
// file-end blank rule, and after the end of the log there must be nothing but zeros (no torn entry kept, nothing
// after one). A kill can land between an entry's data writes and its index write; recovery rewrites the unit.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildStoreChild } from '../../../store/helpers.js';
import { openStore, readFileRange, tempDir } from './helpers.js';

const DATA_FILE_BYTES = 64 * 1024;
const INDEX_FILE_BYTES = 4096;

// Entry i's body: its length and bytes follow from i alone (the parent recomputes them).
const BODY_SOURCE = `
function bodyLength(i) { return 100 + ((i * 7919) % 20000); }
function body(i) {
  const len = bodyLength(i);
  const b = Buffer.allocUnsafe(len);
  for (let k = 0; k < len; k++) b[k] = 1 + ((i * 31 + k * 7) % 251);
  return b;
}`;

const CHILD = `
import { DLedgerFileStore } from './ha/dledger/store/file-store.js';
${BODY_SOURCE}
const [dir, termArg] = process.argv.slice(2);
const log = { info() {}, warn() {}, error() {}, debug() {}, child() { return log; } };
const store = new DLedgerFileStore({ baseDir: dir, dataFileBytes: ${DATA_FILE_BYTES}, indexFileBytes: ${INDEX_FILE_BYTES} }, log);
store.loadSync(0);
process.stdout.write('ready ' + store.endIndex + '\\n');
const term = Number(termArg);
function step() {
  let out = '';
  for (let k = 0; k < 16; k++) {
    const e = store.appendAsLeader(body(store.endIndex + 1), term);
    out += e.index + '\\n';
  }
  process.stdout.write(out);
  setImmediate(step);
}
step();
`;

const bodyLength = new Function(`${BODY_SOURCE}; return bodyLength;`)() as (i: number) => number;
const body = new Function(`${BODY_SOURCE}; return body;`)() as (i: number) => Buffer;

let build: string;
let dir: string;

beforeAll(() => {
  build = buildStoreChild('rmq-dledger-crash-', CHILD, [], ['ha']);
  dir = tempDir();
});

afterAll(() => {
  fs.rmSync(build, { recursive: true, force: true });
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Runs the child until it reported `more` entries beyond where it started; SIGKILLs it. Returns the highest one. */
function runAndKill(term: number, more: number): Promise<{ start: number; maxReported: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(build, 'child.mjs'), dir, String(term)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let start = -2;
    let maxReported = -1;
    let partial = '';
    let killed = false;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        if (line.startsWith('ready ')) start = Number(line.slice(6));
        else maxReported = Math.max(maxReported, Number(line));
      }
      if (!killed && start > -2 && maxReported >= start + more) {
        killed = true;
        child.kill('SIGKILL');
      }
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal !== 'SIGKILL') reject(new Error(`child exited with ${code ?? signal} before it was killed`));
      else resolve({ start, maxReported });
    });
  });
}

describe('kill -9 while appending', () => {
  it('keeps every reported entry and nothing torn, four crashes in a row', async () => {
    let reported = -1;
    for (let round = 1; round <= 4; round++) {
      const { start, maxReported } = await runAndKill(round, 150 + round * 37);
      // The child recovered what the previous round left: at least everything reported then.
      expect(start).toBeGreaterThanOrEqual(reported);
      reported = maxReported;

      const s = openStore(dir, { dataFileBytes: DATA_FILE_BYTES, indexFileBytes: INDEX_FILE_BYTES });
      expect(s.beginIndex).toBe(0);
      expect(s.endIndex).toBeGreaterThanOrEqual(reported);
      let pos = 0;
      let term = 0;
      for (let i = 0; i <= s.endIndex; i++) {
        const size = 48 + bodyLength(i);
        if (size + 8 > DATA_FILE_BYTES - (pos % DATA_FILE_BYTES)) pos += DATA_FILE_BYTES - (pos % DATA_FILE_BYTES);
        const e = s.get(i)!;
        expect(e.pos, `entry ${i}`).toBe(pos);
        expect(e.body.equals(body(i)), `entry ${i} bytes`).toBe(true);
        expect(e.term).toBeGreaterThanOrEqual(term);
        expect(e.term).toBeLessThanOrEqual(round);
        term = e.term;
        pos += size;
      }
      expect(s.writePos).toBe(pos);
      s.close();
      const fileStart = pos - (pos % DATA_FILE_BYTES);
      const tail = readFileRange(path.join(dir, 'data', String(fileStart).padStart(20, '0')), pos - fileStart, DATA_FILE_BYTES - (pos % DATA_FILE_BYTES));
      expect(tail.every((b) => b === 0), `zeros after the end in round ${round}`).toBe(true);
      expect(fs.existsSync(path.join(dir, 'data', String(fileStart + DATA_FILE_BYTES).padStart(20, '0')))).toBe(false);
    }
  }, 120_000);
});
