import crypto from 'node:crypto';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { describe, expect, it } from 'vitest';
import { derPositiveInteger, generateSelfSignedCert } from '../../src/grpc/self-signed-cert.js';

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

  it('writes serials in DER minimal form, so every random serial makes a certificate OpenSSL loads', () => {
    const hex = (b: Buffer): string => derPositiveInteger(b).toString('hex');
    expect(hex(Buffer.from('0001ff', 'hex'))).toBe('020201ff'); // leading zero dropped
    expect(hex(Buffer.from('000080', 'hex'))).toBe('02020080'); // one zero kept: 0x80 would read negative
    expect(hex(Buffer.from('80', 'hex'))).toBe('02020080');
    expect(hex(Buffer.from('0000', 'hex'))).toBe('020100');
    expect(hex(Buffer.from('7f', 'hex'))).toBe('02017f');
    // Serials that broke start-up before (1 random serial in 512 starts like these), and their neighbours.
    for (const first of ['0000', '0001', '007f', '0080', '00ff', '01', '7f', '80', 'ff']) {
      const serial = Buffer.concat([Buffer.from(first, 'hex'), crypto.randomBytes(16 - first.length / 2)]);
      const x = new crypto.X509Certificate(generateSelfSignedCert(['127.0.0.1'], 1, serial).certPem);
      expect(BigInt(`0x${x.serialNumber}`)).toBe(BigInt(`0x${serial.toString('hex')}`));
    }
  });
});
