// White remote address patterns of ACL 1.0 (Java acl/plain/RemoteAddressStrategyFactory): blank matches nothing,
// `*` / `*.*.*.*` everything, `a.b.c.{1,2}` or `a,b` a set, `*` and `x-y` in trailing IPv4 parts a range, anything
// else one address. IPv6 addresses are compared in their expanded form.
import net from 'node:net';

export type AddressMatcher = (ip: string) => boolean;

/** A pattern the official broker would refuse (its AclException text). */
export class AddressPatternError extends Error {}

const NONE: AddressMatcher = () => false;
const ALL: AddressMatcher = () => true;

/** The full form of an IPv6 address (8 groups of 4 upper-case hex digits), as Java AclUtils.expandIP. */
export function expandIPv6(addr: string): string {
  let a = addr.toUpperCase();
  const groups = a.split(':').length - 1;
  if (a.includes('::')) a = a.replace('::', ':'.repeat(8 - groups + 1));
  return a
    .split(':')
    .map((g) => g.padStart(4, '0'))
    .join(':');
}

function normalise(ip: string): string {
  const v4 = ip.replace(/^::ffff:/i, '');
  if (net.isIPv4(v4)) return v4;
  return net.isIPv6(ip) ? expandIPv6(ip) : ip;
}

function setMatcher(addrs: string[]): AddressMatcher {
  const set = new Set<string>();
  for (const raw of addrs) {
    const a = raw.trim();
    if (net.isIPv4(a)) set.add(a);
    else if (net.isIPv6(a)) set.add(expandIPv6(a));
    else throw new AddressPatternError(`Netaddress examine Exception netaddress is ${a}`);
  }
  return (ip) => set.has(normalise(ip));
}

/** One IPv4 part of a range pattern: `*`, `n` or `n-m`. */
function partMatcher(part: string, pattern: string): (n: number) => boolean {
  if (part === '*') return () => true;
  const m = /^(\d{1,3})(?:-(\d{1,3}))?$/.exec(part);
  if (!m) throw new AddressPatternError(`Netaddress examine scope Exception netaddress is ${pattern}`);
  const lo = Number(m[1]);
  const hi = m[2] === undefined ? lo : Number(m[2]);
  if (lo > 255 || hi > 255 || lo > hi) throw new AddressPatternError(`Netaddress examine scope Exception netaddress is ${pattern}`);
  return (n) => n >= lo && n <= hi;
}

function rangeMatcher(pattern: string): AddressMatcher {
  if (pattern.includes(':')) {
    // IPv6 ranges: only a trailing `*` is supported here (prefix match on the expanded form).
    if (!pattern.endsWith('*') || pattern.indexOf('*') !== pattern.length - 1) {
      throw new AddressPatternError(`Netaddress examine scope Exception netaddress is ${pattern}`);
    }
    const prefix = pattern.slice(0, -1).toUpperCase();
    return (ip) => normalise(ip).startsWith(expandIPv6(`${prefix}0`).slice(0, -4));
  }
  const parts = pattern.split('.');
  // Java pads a short pattern with `*` (RangeRemoteAddressStrategy): `192.168.*` = `192.168.*.*`.
  while (parts.length < 4) parts.push('*');
  if (parts.length !== 4) throw new AddressPatternError(`Netaddress examine scope Exception netaddress is ${pattern}`);
  const star = parts.indexOf('*');
  if (star >= 0 && parts.slice(star).some((p) => p !== '*')) {
    throw new AddressPatternError(`Netaddress examine scope Exception netaddress is ${pattern}`);
  }
  const checks = parts.map((p) => partMatcher(p, pattern));
  return (ip) => {
    const v4 = ip.replace(/^::ffff:/i, '');
    if (!net.isIPv4(v4)) return false;
    const nums = v4.split('.').map(Number);
    return checks.every((c, i) => c(nums[i]));
  };
}

/** Compiles a whiteRemoteAddress / globalWhiteRemoteAddresses entry. Throws AddressPatternError on a bad one. */
export function compileAddressPattern(pattern: string | undefined | null): AddressMatcher {
  const p = (pattern ?? '').trim();
  if (p === '') return NONE;
  if (p === '*' || p === '*.*.*.*' || p === '*:*:*:*:*:*:*:*') return ALL;
  if (p.endsWith('}')) {
    const open = p.lastIndexOf('{');
    const sep = p.includes(':') ? ':' : '.';
    if (open < 0 || p[open - 1] !== sep) throw new AddressPatternError(`MultipleRemoteAddressStrategy netaddress examine scope Exception netaddress`);
    const base = p.slice(0, open);
    return setMatcher(p.slice(open + 1, -1).split(',').map((s) => base + s.trim()));
  }
  if (p.includes(',')) return setMatcher(p.split(','));
  if (p.includes('*') || p.includes('-')) return rangeMatcher(p);
  const one = normalise(p);
  return (ip) => normalise(ip) === one;
}
