import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/common/logger.js';
import { RequestCode } from '../../src/common/request-code.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { createRequest } from '../../src/remoting/command.js';
import { runScript, tail } from '../helpers/compat.js';
import { type ServerProcess, runServerProcess } from '../helpers/process-server.js';
import { tempDir } from '../helpers/server.js';

/**
 * TLS on the remoting ports (tls.server.mode): the stock Java 4.9.8 client with -Dtls.enable=true and mqadmin
 * against an enforcing server; a plain peer on that port is closed with a log line; permissive serves plain and
 * TLS peers on one port; a bad certificate path stops start-up naming the key (exit 2).
 */
const MAIN = path.resolve(import.meta.dirname, '../../dist/main.js');
let dir: string;
let cert: string;
let key: string;

beforeAll(() => {
  dir = tempDir('tls');
  cert = path.join(dir, 'server.pem');
  key = path.join(dir, 'server.key');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=localhost'], { stdio: 'ignore' });
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const serverArgs = (mode: string, store: string) => [
  'start',
  '--namesrvPort=0',
  '--listenPort=0',
  `--storePathRootDir=${store}`,
  `--tls.server.mode=${mode}`,
  `--tls.server.certPath=${cert}`,
  `--tls.server.keyPath=${key}`,
];

/** GET_BROKER_CLUSTER_INFO to a nameserver, GET_BROKER_RUNTIME_INFO to a broker: the response code. */
async function clusterInfo(addr: string, useTls: boolean, code: number = RequestCode.GET_BROKER_CLUSTER_INFO): Promise<number> {
  const client = new RemotingClient(silentLogger(), 3000, useTls ? { rejectUnauthorized: false } : undefined);
  try {
    return (await client.request(addr, createRequest(code), 5000)).code;
  } finally {
    await client.close();
  }
}

describe('tls.server.mode=enforcing', () => {
  let server: ServerProcess;
  let store: string;
  beforeAll(async () => {
    store = tempDir('tls-store');
    server = await runServerProcess(serverArgs('enforcing', store));
  });
  afterAll(async () => {
    await server?.stop();
    fs.rmSync(store, { recursive: true, force: true });
  });

  it('closes a plain peer with a log line and serves a TLS peer', async () => {
    await expect(clusterInfo(server.namesrvAddr, false)).rejects.toThrow(/closed/);
    const line = await server.waitForLog(/TLS handshake failed, closing connection/);
    expect(line).toContain('"tlsMode":"enforcing"');
    expect(await clusterInfo(server.namesrvAddr, true)).toBe(0);
  });

  it('serves the stock Java 4.9.8 client with -Dtls.enable=true', { timeout: 6 * 60_000 }, async () => {
    const res = await runScript('compat/java/run.sh', ['SendConsumeTest', `-Dnamesrv=${server.namesrvAddr}`], 5 * 60_000, { JAVA_OPTS: '-Dtls.enable=true' });
    expect(res.code, tail(res.output, 80)).toBe(0);
    expect(res.output).toMatch(/scenarios: \d+ passed, 0 failed/);
  });

  it('serves mqadmin with -Dtls.enable=true', { timeout: 3 * 60_000 }, async () => {
    const res = await runScript('compat/mqadmin/run.sh', ['clusterList', '-n', server.namesrvAddr], 2 * 60_000, { MQADMIN_JAVA_OPTS: '-Dtls.enable=true' });
    expect(res.output, tail(res.output)).toMatch(new RegExp(`DefaultCluster\\s+broker-a\\s+0\\s+${server.brokerAddr.replace(/\./g, '\\.')}`));
  });
});

describe('tls.server.mode=permissive', () => {
  it('serves plain and TLS peers on the same port', async () => {
    const store = tempDir('tls-perm');
    const server = await runServerProcess(serverArgs('permissive', store));
    try {
      expect(await clusterInfo(server.brokerAddr, false, RequestCode.GET_BROKER_RUNTIME_INFO)).toBe(0);
      expect(await clusterInfo(server.brokerAddr, true, RequestCode.GET_BROKER_RUNTIME_INFO)).toBe(0);
      expect(await clusterInfo(server.namesrvAddr, false)).toBe(0);
      expect(await clusterInfo(server.namesrvAddr, true)).toBe(0);
    } finally {
      await server.stop();
      fs.rmSync(store, { recursive: true, force: true });
    }
  });
});

describe('bad TLS configuration', () => {
  it('stops start-up with one line naming the key, exit 2', () => {
    const r = spawnSync(process.execPath, [MAIN, 'start', '--namesrvPort=0', '--listenPort=0', '--tls.server.mode=enforcing', '--tls.server.certPath=/nonexistent/cert.pem', `--tls.server.keyPath=${key}`], {
      encoding: 'utf8',
    });
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual(['rmq: bad configuration: tls.server.certPath: cannot read /nonexistent/cert.pem: ENOENT']);
  });
});
