#!/usr/bin/env node
// ACL 1.0 side by side: the official 4.9.8 broker and ours, each with aclEnable=true and compat/acl/plain_acl.yml,
// driven by the same stock clients (compat/java AclTest with client 4.9.8, compat/go TestAclCredentials). Every
// request's outcome ("[acl] what: allowed" / "denied CODE REMARK") must be the same on both.
//
//   node compat/acl-official.mjs [--official-version=4.9.8] [--keep]
//
// Exit 0 when both servers pass and the outcome lists are equal. Logs in compat/results/acl-<time>/.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { OfficialServer, OursServer, ROOT, run } from './lib/servers.mjs';
import { guardProcess } from './lib/script-args.mjs';

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')).map(([k, v]) => [k, v ?? 'true']));
const version = args['official-version'] ?? '4.9.8';
const ACL_FILE = path.join(ROOT, 'compat/acl/plain_acl.yml');
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const logDir = path.join(ROOT, 'compat/results', `acl-${stamp}`);
fs.mkdirSync(logDir, { recursive: true });
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rmq-acl-'));

guardProcess('acl-official');

/** "[acl] ..." lines of a run, in order. */
const outcomes = (output) => output.split('\n').map((l) => l.replace(/^\s*acl_test\.go:\d+: /, '').trim()).filter((l) => l.startsWith('[acl]'));

async function drive(server) {
  const ns = `127.0.0.1:${server.ports.ns}`;
  const java = await run('bash', [path.join(ROOT, 'compat/java/run.sh'), 'tag:acl', `-Dnamesrv=${ns}`], { logFile: path.join(logDir, `java-${server.label}.log`), timeoutMs: 8 * 60_000 });
  const go = await run('bash', [path.join(ROOT, 'compat/go/run.sh'), ns, '-run', '^TestAclCredentials$'], { logFile: path.join(logDir, `go-${server.label}.log`), env: { ACL_ENABLED: '1' }, timeoutMs: 4 * 60_000 });
  return { java: java.code, go: go.code, lines: [...outcomes(java.output), ...outcomes(go.output)] };
}

const results = {};
for (const kind of ['official', 'ours']) {
  let server;
  if (kind === 'official') {
    server = new OfficialServer(version, tmp, logDir, { extra: 'aclEnable=true', env: { OFFICIAL_ACL_FILE: ACL_FILE } });
    await server.prepare();
  } else {
    const home = path.join(tmp, 'ours-home');
    fs.mkdirSync(path.join(home, 'conf'), { recursive: true });
    fs.copyFileSync(ACL_FILE, path.join(home, 'conf/plain_acl.yml'));
    server = new OursServer(tmp, logDir, { extraArgs: ['--aclEnable=true', `--rocketmqHome=${home}`] });
  }
  await server.start();
  console.log(`acl: ${server.describe()}`);
  try {
    results[kind] = await drive(server);
  } finally {
    await server.stop();
  }
  console.log(`acl: ${kind}: java exit ${results[kind].java}, go exit ${results[kind].go}, ${results[kind].lines.length} outcomes`);
}

// Go log lines carry the client's wording; compare the Java outcomes exactly and the Go ones by their verdict.
const norm = (l) => l.replace(/^(\[acl\] go [^:]+: (allowed|denied)).*$/, '$1');
const off = results.official.lines.map(norm);
const ours = results.ours.lines.map(norm);
const missing = off.filter((l) => !ours.includes(l));
const extra = ours.filter((l) => !off.includes(l));
fs.writeFileSync(path.join(logDir, 'outcomes.json'), JSON.stringify(results, null, 2));
console.log(`acl: official ${version}:\n  ${results.official.lines.join('\n  ')}`);
if (missing.length || extra.length) console.log(`acl: DIFFERENT\n  only official: ${missing.join('\n    ')}\n  only ours: ${extra.join('\n    ')}`);
const ok = results.official.java === 0 && results.official.go === 0 && results.ours.java === 0 && results.ours.go === 0 && !missing.length && !extra.length;
console.log(`acl: ${ok ? 'same outcomes on both servers' : 'FAILED'} (logs in ${logDir})`);
if (!args.keep) fs.rmSync(tmp, { recursive: true, force: true });
process.exit(ok ? 0 : 1);
