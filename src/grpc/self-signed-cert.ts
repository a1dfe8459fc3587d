// A self-signed server certificate for the gRPC port when none is configured (the official proxy's
// tlsTestModeEnable makes Netty generate one in memory). Ours is written to disk so clients that verify
// certificates (the Node client: GRPC_DEFAULT_SSL_ROOTS_FILE_PATH) can be pointed at it, and it names the
// addresses clients dial as subject alternative names (an IP SAN for 127.0.0.1 and brokerIP1). node:crypto makes
// the key and the signature; the X.509 structure (RFC 5280) is written here as DER: EC P-256, ecdsa-with-SHA256.
import crypto from 'node:crypto';
import net from 'node:net';

/** DER tag-length-value. */
function tlv(tag: number, content: Buffer): Buffer {
  const len = content.length;
  let head: Buffer;
  if (len < 0x80) head = Buffer.from([tag, len]);
  else if (len < 0x100) head = Buffer.from([tag, 0x81, len]);
  else if (len < 0x10000) head = Buffer.from([tag, 0x82, len >> 8, len & 0xff]);
  else throw new Error('DER value too long');
  return Buffer.concat([head, content]);
}

const seq = (...items: Buffer[]): Buffer => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]): Buffer => tlv(0x31, Buffer.concat(items));

function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const bytes = [40 * parts[0] + parts[1]];
  for (const p of parts.slice(2)) {
    const chunk = [p & 0x7f];
    for (let v = Math.floor(p / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift((v & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

/**
 * A non-negative INTEGER in DER's minimal form (X.690 8.3.2): leading zero bytes dropped, one 0x00 put back where
 * the first byte would read as negative. A random serial starting 0x00 0x00–0x7f (1 start in 512) was written with
 * its zero and OpenSSL refused the certificate ("asn1 encoding routines::illegal padding"), so the server exited.
 */
export function derPositiveInteger(bytes: Buffer): Buffer {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  const digits = bytes.subarray(start);
  return tlv(0x02, digits[0] & 0x80 ? Buffer.concat([Buffer.from([0]), digits]) : digits);
}

/** UTCTime (years before 2050), YYMMDDHHMMSSZ. */
function utcTime(d: Date): Buffer {
  const s = d.toISOString().replace(/[-:T]/g, '').slice(2, 14) + 'Z';
  return tlv(0x17, Buffer.from(s, 'ascii'));
}

function name(commonName: string): Buffer {
  return seq(set(seq(oid('2.5.4.3'), tlv(0x0c, Buffer.from(commonName, 'utf8')))));
}

function ipBytes(ip: string): Buffer | undefined {
  if (net.isIPv4(ip)) return Buffer.from(ip.split('.').map(Number));
  if (net.isIPv6(ip)) {
    const sock = new net.SocketAddress({ address: ip, family: 'ipv6' });
    const [head, tail = ''] = sock.address.split('::');
    const h = head ? head.split(':') : [];
    const t = tail ? tail.split(':') : [];
    const groups = [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
    const out = Buffer.alloc(16);
    groups.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), i * 2));
    return out;
  }
  return undefined;
}

export interface GeneratedCert {
  /** PKCS#8 PEM (what the official proxy's tlsKeyPath expects too). */
  keyPem: string;
  certPem: string;
}

/**
 * A certificate valid from a day ago for `validDays`, for `hosts` (IP addresses become IP SANs, other names DNS
 * SANs); the first host is the subject CN. Marked as a CA so that trusting it as a root works everywhere.
 */
export function generateSelfSignedCert(hosts: string[], validDays = 3650, serial: Buffer = crypto.randomBytes(16)): GeneratedCert {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const sigAlg = seq(oid('1.2.840.10045.4.3.2'));
  const unique = [...new Set(hosts.filter((h) => h.length > 0))];
  const sans = unique.map((h) => {
    const ip = ipBytes(h);
    return ip ? tlv(0x87, ip) : tlv(0x82, Buffer.from(h, 'ascii'));
  });
  const now = Date.now();
  const extensions = tlv(0xa3, seq(
    seq(oid('2.5.29.17'), tlv(0x04, seq(...sans))),
    seq(oid('2.5.29.19'), tlv(0x04, seq(tlv(0x01, Buffer.from([0xff]))))),
  ));
  const subject = name(unique[0] ?? 'localhost');
  const tbs = seq(
    tlv(0xa0, tlv(0x02, Buffer.from([2]))), // v3
    derPositiveInteger(serial),
    sigAlg,
    subject,
    seq(utcTime(new Date(now - 86_400_000)), utcTime(new Date(now + validDays * 86_400_000))),
    subject,
    spki,
    extensions,
  );
  const signature = crypto.sign('sha256', tbs, { key: privateKey, dsaEncoding: 'der' });
  const cert = seq(tbs, sigAlg, tlv(0x03, Buffer.concat([Buffer.from([0]), signature])));
  const b64 = cert.toString('base64').replace(/(.{64})/g, '$1\n').trimEnd();
  return {
    keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    certPem: `-----BEGIN CERTIFICATE-----\n${b64}\n-----END CERTIFICATE-----\n`,
  };
}
