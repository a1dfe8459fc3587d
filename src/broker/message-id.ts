import type { HostAddress } from '../store/index.js';

const hostHexCache = new WeakMap<HostAddress, string>();

/** Offset msgId (Java MessageDecoder.createMessageId): store ip + port + physical offset, uppercase hex. */
export function createOffsetMessageId(storeHost: HostAddress, commitLogOffset: number): string {
  let hostHex = hostHexCache.get(storeHost);
  if (hostHex === undefined) {
    const buf = Buffer.allocUnsafe(storeHost.ip.length + 4);
    storeHost.ip.copy(buf, 0);
    buf.writeInt32BE(storeHost.port, storeHost.ip.length);
    hostHex = buf.toString('hex').toUpperCase();
    hostHexCache.set(storeHost, hostHex);
  }
  // Offsets stay below 2^53, so toString(16) is exact: 16 hex digits of the 64-bit offset, no BigInt.
  return hostHex + commitLogOffset.toString(16).toUpperCase().padStart(16, '0');
}

const HEX_UPPER = Buffer.from('0123456789ABCDEF', 'latin1');
const hostHexBytesCache = new WeakMap<HostAddress, Buffer>();

/**
 * The offset msgIds of records stored together (one send or batch), comma-separated as SEND_MESSAGE answers carry
 * them: built in one buffer, one string in the end, instead of three strings per record and a join.
 */
export function offsetMessageIds(storeHost: HostAddress, commitLogOffsets: readonly number[]): string {
  let host = hostHexBytesCache.get(storeHost);
  if (host === undefined) {
    host = Buffer.from(createOffsetMessageId(storeHost, 0).slice(0, -16), 'latin1');
    hostHexBytesCache.set(storeHost, host);
  }
  const n = commitLogOffsets.length;
  if (n === 0) return '';
  const idLength = host.length + 16;
  const out = Buffer.allocUnsafe(n * (idLength + 1) - 1);
  let o = 0;
  for (let i = 0; i < n; i++) {
    if (i > 0) out[o++] = 0x2c; // ','
    for (let k = 0; k < host.length; k++) out[o + k] = host[k]!;
    o += host.length;
    const v = commitLogOffsets[i]!;
    const hi = Math.floor(v / 4294967296);
    o = hex8(out, o, hi);
    o = hex8(out, o, v - hi * 4294967296);
  }
  return out.toString('latin1', 0, o);
}

/** 8 uppercase hex digits of a 32-bit value (0 <= v < 2^32) at o; returns o + 8. */
function hex8(b: Buffer, o: number, v: number): number {
  for (let shift = 28; shift >= 0; shift -= 4) b[o++] = HEX_UPPER[(v >>> shift) & 15]!;
  return o;
}

/** Decodes an offset msgId into its address and physical offset; undefined when it is not one. */
export function decodeOffsetMessageId(msgId: string): { addr: string; commitLogOffset: number } | undefined {
  if (!/^[0-9A-Fa-f]+$/.test(msgId) || (msgId.length !== 32 && msgId.length !== 56)) return undefined;
  const buf = Buffer.from(msgId, 'hex');
  const ipLen = buf.length - 12;
  const ip = buf.subarray(0, ipLen);
  const port = buf.readInt32BE(ipLen);
  const offset = Number(buf.readBigInt64BE(ipLen + 4));
  const host = ipLen === 4 ? [...ip].join('.') : (ip.toString('hex').match(/.{4}/g) ?? []).join(':');
  return { addr: `${host}:${port}`, commitLogOffset: offset };
}

const hostCache = new Map<string, HostAddress>();
const HOST_CACHE_MAX_ENTRIES = 4096;

/**
 * Parses "ip:port" (IPv4 or IPv6, with or without brackets) into the record's host layout. Every send parses
 * its peer's and the broker's address, so results are cached (bounded); callers must not modify them.
 */
export function parseHostAddress(addr: string): HostAddress {
  let host = hostCache.get(addr);
  if (!host) {
    if (hostCache.size >= HOST_CACHE_MAX_ENTRIES) hostCache.clear();
    host = parseHostAddressUncached(addr);
    hostCache.set(addr, host);
  }
  return host;
}

function parseHostAddressUncached(addr: string): HostAddress {
  const idx = addr.lastIndexOf(':');
  let host = idx >= 0 ? addr.slice(0, idx) : addr;
  const port = idx >= 0 ? Number(addr.slice(idx + 1)) || 0 : 0;
  host = host.replace(/^\[|\]$/g, '').replace(/^::ffff:/, '');
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(host);
  if (v4) return { ip: Buffer.from([+v4[1], +v4[2], +v4[3], +v4[4]]), port };
  return { ip: ipv6ToBuffer(host), port };
}

function ipv6ToBuffer(host: string): Buffer {
  const out = Buffer.alloc(16);
  const [head, tail] = host.includes('::') ? host.split('::') : [host, ''];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = [...h, ...new Array(Math.max(0, 8 - h.length - t.length)).fill('0'), ...t];
  for (let i = 0; i < 8; i++) out.writeUInt16BE(parseInt(groups[i] ?? '0', 16) || 0, i * 2);
  return out;
}

let uniqCounter = 0;
const uniqPrefix = (() => {
  const b = Buffer.alloc(10);
  b.writeUInt32BE(0x7f000001, 0);
  b.writeInt16BE(process.pid & 0x7fff, 4);
  b.writeInt32BE((Math.random() * 0x7fffffff) | 0, 6);
  return b.toString('hex').toUpperCase();
})();

/** A UNIQ_KEY for messages whose producer set none (ali-ons), in Java MessageClientIDSetter's shape. */
export function createUniqueKey(nowMs = Date.now()): string {
  const d = new Date(nowMs);
  const monthStart = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const b = Buffer.alloc(6);
  b.writeInt32BE((nowMs - monthStart) | 0, 0);
  uniqCounter = (uniqCounter + 1) & 0xffff;
  b.writeUInt16BE(uniqCounter, 4);
  return uniqPrefix + b.toString('hex').toUpperCase();
}
