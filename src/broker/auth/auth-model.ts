// ACL 2.0 model (5.x auth module: authentication/model/User, authorization/model/Acl, Policy, PolicyEntry,
// Resource, Environment) and the matching rules of AclAuthorizationHandler. Names as the official JSON has them.
import net from 'node:net';

export class AuthError extends Error {}

export type UserType = 'Super' | 'Normal';
export type UserStatus = 'enable' | 'disable';

export interface User {
  username: string;
  password: string;
  userType: UserType;
  userStatus: UserStatus;
}

export type ResourceType = 'Any' | 'Cluster' | 'Namespace' | 'Topic' | 'Group';
export type ResourcePattern = 'ANY' | 'LITERAL' | 'PREFIXED';

export interface Resource {
  type: ResourceType;
  name: string | null;
  pattern: ResourcePattern;
}

export type Action = 'All' | 'Any' | 'Pub' | 'Sub' | 'Create' | 'Update' | 'Delete' | 'Get' | 'List';
export const ACTIONS: readonly Action[] = ['All', 'Any', 'Pub', 'Sub', 'Create', 'Update', 'Delete', 'Get', 'List'];
export type Decision = 'Allow' | 'Deny';

export interface PolicyEntry {
  resource: Resource;
  actions: Action[];
  sourceIps: string[];
  decision: Decision;
}

export interface Policy {
  policyType: 'Custom' | 'Default';
  entries: PolicyEntry[];
}

export interface Acl {
  /** `User:name` */
  subject: string;
  policies: Policy[];
}

const byName = <T extends string>(values: readonly T[], name: string | undefined | null): T | undefined =>
  values.find((v) => v.toLowerCase() === (name ?? '').toLowerCase());

export const parseUserType = (s: string | undefined | null) => byName<UserType>(['Super', 'Normal'], s);
export const parseUserStatus = (s: string | undefined | null) => byName<UserStatus>(['enable', 'disable'], s);
export const parseAction = (s: string | undefined | null) => byName<Action>(ACTIONS, s);
export const parseDecision = (s: string | undefined | null) => byName<Decision>(['Allow', 'Deny'], s);
export const parsePolicyType = (s: string | undefined | null) => byName<'Custom' | 'Default'>(['Custom', 'Default'], s);

/** Java Resource.of(String): `*`, `Type:*`, `Type:prefix*`, `Type:name`; undefined for an unknown type. */
export function parseResource(key: string | undefined | null): Resource | undefined {
  if (!key || key.trim() === '') return undefined;
  if (key === '*') return { type: 'Any', name: null, pattern: 'ANY' };
  const i = key.indexOf(':');
  const type = byName<ResourceType>(['Any', 'Cluster', 'Namespace', 'Topic', 'Group'], i < 0 ? key : key.slice(0, i));
  if (!type) return undefined;
  const name = i < 0 ? '' : key.slice(i + 1);
  if (name === '*') return { type, name: null, pattern: 'ANY' };
  if (name.endsWith('*')) return { type, name: name.slice(0, name.indexOf('*')), pattern: 'PREFIXED' };
  return { type, name, pattern: 'LITERAL' };
}

export function resourceKey(r: Resource): string {
  if (r.type === 'Any') return '*';
  if (r.pattern === 'ANY') return `${r.type}:*`;
  return r.pattern === 'PREFIXED' ? `${r.type}:${r.name}*` : `${r.type}:${r.name}`;
}

/** Java Resource.isMatch: `entry` (from a policy) against the resource a request needs. */
export function resourceMatches(entry: Resource, wanted: Resource): boolean {
  if (entry.type === 'Any') return true;
  if (entry.type !== wanted.type) return false;
  if (entry.pattern === 'ANY') return true;
  if (entry.pattern === 'LITERAL') return wanted.name === entry.name;
  return (wanted.name ?? '').startsWith(entry.name ?? '');
}

export function actionsMatch(entry: readonly Action[], wanted: readonly Action[]): boolean {
  if (entry.length === 0) return false;
  if (wanted.includes('Any')) return true;
  return wanted.some((a) => entry.includes(a) || entry.includes('All'));
}

function ipToBigInt(ip: string): bigint | undefined {
  if (net.isIPv4(ip)) return ip.split('.').reduce((a, p) => (a << 8n) + BigInt(Number(p)), 0n);
  if (!net.isIPv6(ip)) return undefined;
  const [head, tail] = ip.split('::');
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return groups.reduce((a, g) => (a << 16n) + BigInt(parseInt(g || '0', 16)), 0n);
}

/** Java IPAddressUtils.isIPInRange: an address or a CIDR block. */
export function ipInRange(ip: string, range: string): boolean {
  const target = ip.replace(/^::ffff:/i, '');
  if (!range.includes('/')) return target === range;
  const [base, bitsText] = range.split('/');
  const bits = Number(bitsText);
  const a = ipToBigInt(target);
  const b = ipToBigInt(base);
  if (a === undefined || b === undefined || net.isIPv4(target) !== net.isIPv4(base)) return false;
  const width = net.isIPv4(base) ? 32n : 128n;
  const shift = width - BigInt(bits);
  return a >> shift === b >> shift;
}

export function isValidSourceIp(s: string): boolean {
  if (!s.includes('/')) return net.isIP(s) !== 0;
  const [base, bits] = s.split('/');
  const max = net.isIPv4(base) ? 32 : net.isIPv6(base) ? 128 : -1;
  return max > 0 && /^\d+$/.test(bits) && Number(bits) <= max;
}

/** AclAuthorizationHandler.comparePolicyEntries, kept as written there (the first entry after sorting decides). */
function comparePolicyEntries(o1: PolicyEntry, o2: PolicyEntry): number {
  let compare = 0;
  const r1 = o1.resource;
  const r2 = o2.resource;
  if (r1.type !== r2.type) {
    if (r1.type === 'Any') compare = 1;
    if (r2.type === 'Any') compare = -1;
  } else if (r1.pattern === r2.pattern) {
    if (r1.pattern === 'PREFIXED') compare = Math.sign((r1.name ?? '').length - (r2.name ?? '').length);
  } else if (r1.pattern === 'LITERAL' || r1.pattern === 'PREFIXED') {
    compare = -1;
  }
  if (compare !== 0) return compare;
  return o1.decision === 'Deny' ? 1 : o2.decision === 'Deny' ? -1 : 0;
}

/** The entry that decides a request (Custom policy first, Default if nothing matched there), or undefined. */
export function decidingEntry(acl: Acl, wanted: Resource, actions: readonly Action[], sourceIp: string): PolicyEntry | undefined {
  const matching = (type: 'Custom' | 'Default') =>
    (acl.policies.find((p) => p.policyType === type)?.entries ?? []).filter(
      (e) => resourceMatches(e.resource, wanted) && actionsMatch(e.actions, actions) && (e.sourceIps.length === 0 || e.sourceIps.some((r) => ipInRange(sourceIp, r))),
    );
  let entries = matching('Custom');
  if (entries.length === 0) entries = matching('Default');
  if (entries.length === 0) return undefined;
  return [...entries].sort(comparePolicyEntries)[0];
}
