#!/usr/bin/env node
// ACL 2.0 side by side: the official 5.3.3 broker and ours, both with authenticationEnabled + authorizationEnabled
// and initAuthenticationUser rocketmq/12345678, set up by the stock mqadmin 5.3.3 (compat/acl/acl2-setup.sh) and
// driven by the stock Java client 5.5.0 (compat/java Acl2Test). Every request's outcome — allowed, or denied with
// its code and remark — and mqadmin's getUser / getAcl output must be the same on both.
//
//   node compat/acl2-official.mjs [--official-version=5.3.3] [--client=5.5.0] [--keep]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { OfficialServer, OursServer, ROOT, run } from './lib/servers.mjs';
import { guardProcess } from './lib/script-args.mjs';

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')).map(([k, v]) => [k, v ?? 'true']));
const version = args['official-version'] ?? '5.3.3';
const client = args.client ?? '5.5.0';
const INIT_USER = '{"username":"rocketmq","password":"12345678"}';
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const logDir = path.join(ROOT, 'compat/results', `acl2-${stamp}`);
fs.mkdirSync(logDir, { recursive: true });
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rmq-acl2-'));
guardProcess('acl2-official');

const OFFICIAL_EXTRA = [
  'authenticationEnabled=true',
  'authenticationProvider=org.apache.rocketmq.auth.authentication.provider.DefaultAuthenticationProvider',
  'authenticationMetadataProvider=org.apache.rocketmq.auth.authentication.provider.LocalAuthenticationMetadataProvider',
  'authorizationEnabled=true',
  'authorizationProvider=org.apache.rocketmq.auth.authorization.provider.DefaultAuthorizationProvider',
  'authorizationMetadataProvider=org.apache.rocketmq.auth.authorization.provider.LocalAuthorizationMetadataProvider',
  `initAuthenticationUser=${INIT_USER}`,
  'innerClientAuthenticationCredentials={"accessKey":"rocketmq","secretKey":"12345678"}',
].join('\n');

/** The setup's getUser/getAcl table rows and the scenario's "[acl2]" lines, in order. */
const lines = (output, re) => output.split('\n').map((l) => l.trimEnd()).filter((l) => re.test(l));

const results = {};
for (const kind of ['official', 'ours']) {
  let server;
  if (kind === 'official') {
    server = new OfficialServer(version, tmp, logDir, { extra: OFFICIAL_EXTRA });
    await server.prepare();
  } else {
    server = new OursServer(tmp, logDir, { extraArgs: ['--authenticationEnabled=true', '--authorizationEnabled=true', `--initAuthenticationUser=${INIT_USER}`] });
  }
  await server.start();
  console.log(`acl2: ${server.describe()}`);
  const ns = `127.0.0.1:${server.ports.ns}`;
  try {
    const setup = await run('bash', [path.join(ROOT, 'compat/acl/acl2-setup.sh'), ns, `127.0.0.1:${server.ports.broker}`], { logFile: path.join(logDir, `setup-${kind}.log`), timeoutMs: 10 * 60_000 });
    const java = await run('bash', [path.join(ROOT, 'compat/java/run.sh'), 'tag:acl2', `-Dnamesrv=${ns}`, `-Drocketmq.version=${client}`], { logFile: path.join(logDir, `java-${kind}.log`), timeoutMs: 8 * 60_000 });
    results[kind] = {
      setup: setup.code,
      java: java.code,
      tables: lines(setup.output, /^(appUser|User:appUser|#UserName|#Subject)\s/).map((l) => l.replace(/\s+/g, ' ')),
      outcomes: lines(java.output, /^\[acl2\]/),
    };
  } finally {
    await server.stop();
  }
  console.log(`acl2: ${kind}: setup exit ${results[kind].setup}, java exit ${results[kind].java}, ${results[kind].outcomes.length} outcomes`);
}

fs.writeFileSync(path.join(logDir, 'outcomes.json'), JSON.stringify(results, null, 2));
const same = (a, b) => JSON.stringify([...a].sort()) === JSON.stringify([...b].sort());
const sameOutcomes = same(results.official.outcomes, results.ours.outcomes);
const sameTables = same(results.official.tables, results.ours.tables);
console.log(`acl2: official ${version} outcomes:\n  ${results.official.outcomes.join('\n  ')}`);
console.log(`acl2: official ${version} mqadmin tables:\n  ${results.official.tables.join('\n  ')}`);
if (!sameOutcomes) console.log(`acl2: ours differs:\n  ${results.ours.outcomes.join('\n  ')}`);
if (!sameTables) console.log(`acl2: ours' mqadmin tables differ:\n  ${results.ours.tables.join('\n  ')}`);
const ok = ['official', 'ours'].every((k) => results[k].setup === 0 && results[k].java === 0) && sameOutcomes && sameTables;
console.log(`acl2: ${ok ? 'same outcomes on both servers' : 'FAILED'} (logs in ${logDir})`);
if (!args.keep) fs.rmSync(tmp, { recursive: true, force: true });
process.exit(ok ? 0 : 1);
