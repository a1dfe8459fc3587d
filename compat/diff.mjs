#!/usr/bin/env node
// Compares two dumps of the differential probe (compat/java DiffProbeTest, -DdiffOut=FILE): one taken against an
// official Apache RocketMQ broker, one against ours, after the same admin calls, sends, pulls and commits.
//
//   node compat/diff.mjs OFFICIAL.json OURS.json [--official-version=5.3.3]
//
// Prints `PASS diff:<group>` / `FAIL diff:<group>: ...` per group (route, offsets, topicStatus, consumerProgress),
// exits 1 on any FAIL. compat/runner.mjs imports compareDumps() and shows the groups as matrix rows.
//
// Normalised before comparing (legitimately different between two servers): the port of any ip:port string
// (broker addresses), timestamps (> 0 becomes "<time>"; 0 stays 0, so "never" still has to agree), consumeTps and
// 5.x topicPutTps (rates over the last minute, from counters each broker samples every 10 s on its own clock: the
// same sends give 0 or 2.4 depending on where the samples fall). Everything else must be equal, except the
// documented 4.9.x/5.x differences below when comparing with a 4.9.x broker: where 4.9.x and 5.x disagree, ours
// follows 5.x.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const GROUPS = ['route', 'offsets', 'topicStatus', 'consumerProgress'];

/**
 * Where official 4.9.x and official 5.x answer differently and ours answers like 5.x (checked against 5.3.3 without
 * exception). Only applied when the official side is 4.x; listed in the output as "ignored".
 */
export const KNOWN_4X_DIFFERENCES = [
  {
    path: /^offsets\.queues\.[^.]+\.searchOffset\(now\+1h\)$/,
    why: 'searchOffset for a time after the last message: 4.9.x answers the last message\'s offset (max - 1), 5.x the max offset',
  },
  {
    path: /^topicStatus\.[^.]+\.offsetTable\./,
    why: 'topicStatus (GET_TOPIC_STATS_INFO): 4.9.x lists the write queues, 5.x the read queues',
    // only the queues one side lists and the other does not; a listed queue's offsets must still agree
    onlyMissing: true,
  },
  {
    path: /\.pullOffset$/,
    why: 'consumerProgress pullOffset exists in 5.x only (a 4.9.x broker does not send it, a 5.x client shows 0)',
  },
];

const ADDR = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/;
const TIME_KEY = /(timestamp|StoreTime|Time)$/i;

/** Copy of a dump with addresses, timestamps and rates made comparable. */
export function normalise(v, key = '') {
  if (Array.isArray(v)) return v.map((x) => normalise(x));
  if (v !== null && typeof v === 'object') {
    const out = {};
    for (const [k, x] of Object.entries(v)) {
      if (k === 'consumeTps' || k === 'topicPutTps') continue;
      out[k] = normalise(x, k);
    }
    return out;
  }
  if (typeof v === 'string' && ADDR.test(v)) return v.replace(ADDR, '$1:<port>');
  if (typeof v === 'number' && TIME_KEY.test(key) && !/offset/i.test(key)) return v > 0 ? '<time>' : v;
  return v;
}

const MISSING = Symbol('missing');

function pathJoin(base, k) {
  const seg = /^[A-Za-z_$][\w$()+-]*$/.test(k) ? k : JSON.stringify(k);
  return base ? `${base}.${seg}` : seg;
}

function show(v) {
  if (v === MISSING) return '(absent)';
  const s = JSON.stringify(v);
  return s.length > 120 ? `${s.slice(0, 117)}...` : s;
}

/** Every leaf-level difference: { path, official, ours, missing } (missing: one side lacks the key/element). */
export function differences(a, b, base = '', out = []) {
  const isObj = (x) => x !== null && typeof x === 'object';
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      differences(i < a.length ? a[i] : MISSING, i < b.length ? b[i] : MISSING, `${base}[${i}]`, out);
    }
  } else if (isObj(a) && isObj(b) && !Array.isArray(a) && !Array.isArray(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      differences(k in a ? a[k] : MISSING, k in b ? b[k] : MISSING, pathJoin(base, k), out);
    }
  } else if (JSON.stringify(a) !== JSON.stringify(b) || a === MISSING || b === MISSING) {
    if (a !== b) out.push({ path: base, official: a, ours: b, missing: a === MISSING || b === MISSING });
  }
  return out;
}

/**
 * Compares an official dump with ours. Returns { groups: { <group>: { status: 'PASS'|'FAIL', reason, diffs, ignored } } }.
 */
export function compareDumps(official, ours, { officialVersion = '' } = {}) {
  const known = /^4\./.test(officialVersion) ? KNOWN_4X_DIFFERENCES : [];
  const groups = {};
  for (const g of GROUPS) {
    const diffs = [];
    const ignored = [];
    if (!(g in official) || !(g in ours)) {
      diffs.push({ path: g, official: g in official ? '(present)' : MISSING, ours: g in ours ? '(present)' : MISSING, missing: true });
    } else {
      for (const d of differences(normalise(official[g]), normalise(ours[g]), g)) {
        const rule = known.find((r) => r.path.test(d.path) && (!r.onlyMissing || d.missing));
        (rule ? ignored : diffs).push(rule ? { ...d, why: rule.why } : d);
      }
    }
    const lines = diffs.map((d) => `${d.path}: official ${show(d.official)}, ours ${show(d.ours)}`);
    groups[g] = {
      status: diffs.length ? 'FAIL' : 'PASS',
      reason: diffs.length ? `${diffs.length} difference(s) from official ${officialVersion}: ${lines.slice(0, 3).join('; ')}${lines.length > 3 ? '; ...' : ''}` : '',
      lines,
      diffs,
      ignored,
    };
  }
  return { groups };
}

/** Human-readable report: the PASS/FAIL lines runner-style, then every difference and every ignored one. */
export function report(result) {
  const out = [];
  for (const [g, r] of Object.entries(result.groups)) {
    out.push(r.status === 'PASS' ? `PASS diff:${g}` : `FAIL diff:${g}: ${r.reason}`);
    for (const l of r.status === 'FAIL' ? r.lines : []) out.push(`       ${l}`);
    const why = [...new Set(r.ignored.map((d) => d.why))];
    for (const w of why) out.push(`       ignored ${r.ignored.filter((d) => d.why === w).length} known 4.9.x/5.x difference(s): ${w}`);
  }
  return out.join('\n');
}

function main(argv) {
  const files = argv.filter((a) => !a.startsWith('--'));
  const ver = (/^--official-version=(.+)$/.exec(argv.find((a) => a.startsWith('--official-version=')) ?? '') ?? [])[1] ?? '';
  if (files.length !== 2) {
    console.error('usage: node compat/diff.mjs OFFICIAL.json OURS.json [--official-version=5.3.3]');
    process.exit(2);
  }
  const [official, ours] = files.map((f) => JSON.parse(fs.readFileSync(f, 'utf8')));
  const result = compareDumps(official, ours, { officialVersion: ver });
  console.log(report(result));
  process.exit(Object.values(result.groups).some((r) => r.status === 'FAIL') ? 1 : 0);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main(process.argv.slice(2));
