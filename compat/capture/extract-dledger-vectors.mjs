#!/usr/bin/env node
// Picks the DLedger requests official members sent to our node out of a capture-proxy file (written by
// test/ha/dledger/interop-official.test.ts with DLEDGER_CAPTURE=FILE) and writes protocol/vectors/dledger-*.json
// ({"source", "direction", "frameHex"}), one per request kind: vote, heartbeat, and the four push types.
//
//   node compat/capture/extract-dledger-vectors.mjs FRAMES.jsonl OUTDIR "SOURCE DESCRIPTION"
import fs from 'node:fs';
import path from 'node:path';

const [file, outDir, source] = process.argv.slice(2);
if (!file || !outDir || !source) {
  process.stderr.write('usage: extract-dledger-vectors.mjs FRAMES.jsonl OUTDIR "SOURCE"\n');
  process.exit(2);
}
const frames = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));

function body(f) {
  const b = Buffer.from(f.frameHex, 'hex');
  const hl = b.readUInt32BE(4) & 0xffffff;
  return JSON.parse(b.subarray(8 + hl).toString('utf8'));
}

const wanted = [
  ['dledger-official-vote-request', 51001, null],
  ['dledger-official-heartbeat-request', 51002, null],
  ['dledger-official-push-compare-request', 51004, 'COMPARE'],
  ['dledger-official-push-truncate-request', 51004, 'TRUNCATE'],
  ['dledger-official-push-append-request', 51004, 'APPEND'],
  ['dledger-official-push-commit-request', 51004, 'COMMIT'],
];
let missing = 0;
for (const [name, code, type] of wanted) {
  const f = frames.find((x) => x.dir === 'c2s' && (x.flag & 1) === 0 && x.code === code && (type === null || body(x).type === type));
  if (!f) {
    process.stderr.write(`extract-dledger-vectors: no frame for ${name}\n`);
    missing++;
    continue;
  }
  const b = body(f);
  const note = `${type ?? ''} request from official member ${b.localId} (term ${b.term}) to our node ${b.remoteId}`.trim();
  const v = { source: `${source}; ${note}`, direction: `official ${b.localId}->ours ${b.remoteId}`, frameHex: f.frameHex };
  fs.writeFileSync(path.join(outDir, `${name}.json`), JSON.stringify(v, null, 2) + '\n');
  process.stdout.write(`${name}.json  code=${code} bytes=${f.frameHex.length / 2}\n`);
}
process.exit(missing > 0 ? 1 : 0);
