import { spawn } from 'node:child_process';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatedCertPaths } from '../../src/grpc/tls.js';
import { type TestServer, startTestServer } from '../helpers/server.js';
import { call, grpcEndpoint, metadata, rawClient } from './helpers.js';

const SIXTY_YEARS_MS = 60 * 365 * 24 * 3600 * 1000;

describe('gRPC endpoint transport', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("keeps a Telemetry stream open under Java's 60-year deadline (grpc-timeout 31536000M overflows grpc-js)", async () => {
    const client = rawClient(server);
    const stream = client.Telemetry(metadata('deadline-client'), { deadline: Date.now() + SIXTY_YEARS_MS });
    let status: grpc.StatusObject | undefined;
    stream.on('status', (s: grpc.StatusObject) => (status = s));
    stream.on('error', () => undefined);
    const replies: unknown[] = [];
    const first = new Promise((resolve) => stream.once('data', resolve));
    stream.on('data', (d: unknown) => replies.push(d));
    stream.write({ settings: { client_type: 'PRODUCER', publishing: { topics: [{ name: 'DeadlineTopic' }] } } });
    const reply = (await first) as { status: { code: string }; settings: { publishing: { max_body_size: number } } };
    expect(reply.status.code).toBe('OK');
    expect(reply.settings.publishing.max_body_size).toBe(4 * 1024 * 1024);
    await new Promise((r) => setTimeout(r, 1200)); // grpc-js unpatched ends the stream after 1 ms
    expect(status).toBeUndefined();
    stream.write({ settings: { client_type: 'PRODUCER', publishing: { topics: [{ name: 'DeadlineTopic' }] } } });
    await new Promise((resolve) => stream.once('data', resolve));
    stream.end();
    await new Promise((resolve) => stream.once('status', resolve));
    expect(status?.code).toBe(grpc.status.OK);
    client.close();
  });

  it('serves TLS and plaintext on one port; a verifying client trusts the generated certificate (IP SAN 127.0.0.1)', async () => {
    const { certPath } = generatedCertPaths(server.storeDir);
    const plain = rawClient(server);
    const [e1, r1] = await call(plain, 'QueryRoute', { topic: { name: 'TlsTopic' }, endpoints: { scheme: 'IPv4', addresses: [{ host: '127.0.0.1', port: server.broker.grpcPort }] } }, metadata('plain'));
    expect(e1).toBeNull();
    expect(r1.status.code).toBe('OK');
    plain.close();
    // The Node 5.x client over TLS: grpc-js verifies the certificate; GRPC_DEFAULT_SSL_ROOTS_FILE_PATH is how it trusts ours.
    const script = `
      const { Producer } = require('rocketmq-client-nodejs');
      const logger = { info() {}, warn() {}, error() {}, debug() {}, close() {} };
      (async () => {
        const p = new Producer({ endpoints: '${grpcEndpoint(server)}', namespace: '', topics: ['TlsTopic'], sslEnabled: true, logger });
        await p.startup();
        const r = await p.send({ topic: 'TlsTopic', body: Buffer.from('over tls') });
        console.log('SENT ' + r.messageId);
        await p.shutdown();
        process.exit(0);
      })().catch((e) => { console.log('FAILED ' + e.message); process.exit(1); });
    `;
    const out = await new Promise<string>((resolve) => {
      const child = spawn(process.execPath, ['-e', script], {
        cwd: path.resolve(__dirname, '../..'),
        env: { ...process.env, GRPC_DEFAULT_SSL_ROOTS_FILE_PATH: certPath },
      });
      let text = '';
      child.stdout.on('data', (d) => (text += d));
      child.stderr.on('data', (d) => (text += d));
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000); // bounds a broken server only
      child.on('exit', () => {
        clearTimeout(timer);
        resolve(text);
      });
    });
    expect(out).toMatch(/SENT [0-9A-F]{34}/);
  });
});
