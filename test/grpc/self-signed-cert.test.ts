import crypto from 'node:crypto';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { describe, expect, it } from 'vitest';
import { generateSelfSignedCert } from '../../src/grpc/self-signed-cert.js';

describe('self-signed gRPC certificate', () => {
  it('is a valid X.509 certificate with IP and DNS SANs, signed by its own key', () => {
    const c = generateSelfSignedCert(['127.0.0.1', 'localhost', '::1', '10.1.2.3']);
    const x = new crypto.X509Certificate(c.certPem);
    expect(x.subject).toBe('CN=127.0.0.1');
    expect(x.subjectAltName).toBe('IP Address:127.0.0.1, DNS:localhost, IP Address:0:0:0:0:0:0:0:1, IP Address:10.1.2.3');
    expect(x.verify(x.publicKey)).toBe(true);
    expect(x.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(x.checkHost('localhost')).toBe('localhost');
    expect(x.ca).toBe(true);
    expect(new Date(x.validFrom).getTime()).toBeLessThan(Date.now());
    expect(new Date(x.validTo).getTime()).toBeGreaterThan(Date.now() + 365 * 86_400_000);
    expect(x.checkPrivateKey(crypto.createPrivateKey(c.keyPem))).toBe(true);
    expect(c.keyPem).toContain('BEGIN PRIVATE KEY'); // PKCS#8, as the official proxy's tlsKeyPath wants
  });

  it('is accepted by OpenSSL and by a verifying Node TLS client that trusts it', async () => {
    const c = generateSelfSignedCert(['127.0.0.1']);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rmqts-cert-'));
    const crt = path.join(dir, 'c.crt');
    fs.writeFileSync(crt, c.certPem);
    const r = spawnSync('openssl', ['verify', '-CAfile', crt, crt], { encoding: 'utf8' });
    if (r.error === undefined) expect(r.stdout.trim()).toBe(`${crt}: OK`);
    const server = tls.createServer({ key: c.keyPem, cert: c.certPem }, (s) => s.end('hi'));
    await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
    const port = (server.address() as { port: number }).port;
    try {
      const got = await new Promise<string>((res, rej) => {
        const s = tls.connect({ host: '127.0.0.1', port, ca: c.certPem }, () => undefined);
        let data = '';
        s.on('data', (d) => (data += d));
        s.on('end', () => res(data));
        s.on('error', rej);
      });
      expect(got).toBe('hi');
    } finally {
      server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
