// The ACL 1.0 file (Java `conf/plain_acl.yml`, read by acl/plain/PlainPermissionManager): global white addresses,
// accounts with their keys, white address, admin flag and default / per-resource permissions, and a data version.
// Parsed with the `yaml` package (the official broker reads it with SnakeYAML, so hand-written files may use any
// YAML form); a syntax error names the line.
import { createRequire } from 'node:module';
import { type AddressMatcher, AddressPatternError, compileAddressPattern } from './remote-address.js';

const require = createRequire(import.meta.url);
/** The yaml package is loaded when an ACL file is read or written, not at every start-up (~30 ms of module load). */
const yaml = (): typeof import('yaml') => require('yaml') as typeof import('yaml');

/** Java acl/common/Permission. */
export const Perm = { DENY: 1, ANY: 2, PUB: 4, SUB: 8 } as const;

/** One account as written in the file / sent by UPDATE_AND_CREATE_ACL_CONFIG (Java PlainAccessConfig). */
export interface PlainAccessConfig {
  accessKey: string;
  secretKey: string;
  whiteRemoteAddress?: string;
  admin: boolean;
  defaultTopicPerm?: string;
  defaultGroupPerm?: string;
  topicPerms?: string[];
  groupPerms?: string[];
}

export interface AclFileVersion {
  counter: number;
  timestamp: number;
}

export interface PlainAclFile {
  globalWhiteRemoteAddresses: string[];
  accounts: PlainAccessConfig[];
  dataVersion: AclFileVersion;
}

/** An account ready for checks (Java PlainAccessResource as built by buildPlainAccessResource). */
export interface OwnedAccess {
  accessKey: string;
  secretKey: string;
  admin: boolean;
  defaultTopicPerm: number;
  defaultGroupPerm: number;
  /** Topic name or `%RETRY%group` → permission bits. */
  resourcePerms: Map<string, number>;
  whiteAddress: AddressMatcher;
}

/** A file or request the official broker would refuse; the message is its AclException text. */
export class AclConfigError extends Error {}

/** Java AclConstants.ACCESS_KEY_MIN_LENGTH / SECRET_KEY_MIN_LENGTH: keys must be longer than 6 characters. */
const KEY_MIN_LENGTH = 6;

export function parsePerm(text: string | undefined | null): number {
  switch ((text ?? '').trim()) {
    case 'PUB':
      return Perm.PUB;
    case 'SUB':
      return Perm.SUB;
    case 'PUB|SUB':
    case 'SUB|PUB':
      return Perm.PUB | Perm.SUB;
    default:
      return Perm.DENY; // null, DENY and anything unknown (Java Permission.parsePermFromString)
  }
}

/** Java Permission.checkPermission. */
export function permits(needed: number, owned: number): boolean {
  if ((owned & Perm.DENY) !== 0) return false;
  if ((needed & Perm.ANY) !== 0) return (owned & (Perm.PUB | Perm.SUB)) !== 0;
  return (needed & owned) !== 0;
}

/** Java Permission.checkResourcePerms: `Res=PERM` with a known permission. */
export function checkResourcePerms(resources: readonly string[] | undefined): void {
  for (const r of resources ?? []) {
    const items = r.split('=').filter((s) => s !== '');
    if (items.length !== 2) {
      throw new AclConfigError(`Parse Resource format error for ${r}.\nThe expected resource format is 'Res=Perm'. For example: topicA=SUB`);
    }
    if (items[1].trim() !== 'DENY' && parsePerm(items[1]) === Perm.DENY) {
      throw new AclConfigError(`Parse resource permission error for ${r}.\nThe expected permissions are 'SUB' or 'PUB' or 'SUB|PUB' or 'PUB|SUB'.`);
    }
  }
}

export function checkKeys(accessKey: string | undefined, secretKey: string | undefined): void {
  if (!accessKey || !secretKey || accessKey.length <= KEY_MIN_LENGTH || secretKey.length <= KEY_MIN_LENGTH) {
    throw new AclConfigError(`The accessKey=${accessKey ?? null} and secretKey=${secretKey ?? null} cannot be null and length should longer than 6`);
  }
}

export function buildOwnedAccess(c: PlainAccessConfig): OwnedAccess {
  checkKeys(c.accessKey, c.secretKey);
  const resourcePerms = new Map<string, number>();
  const add = (list: string[] | undefined, kind: 'topic' | 'group') => {
    for (const r of list ?? []) {
      const items = r.split('=').filter((s) => s !== '');
      if (items.length !== 2) throw new AclConfigError(`Parse resource permission failed for ${kind}:${r}`);
      const name = items[0].trim();
      resourcePerms.set(kind === 'topic' ? name : `%RETRY%${name}`, parsePerm(items[1]));
    }
  };
  add(c.groupPerms, 'group');
  add(c.topicPerms, 'topic');
  let whiteAddress: AddressMatcher;
  try {
    whiteAddress = compileAddressPattern(c.whiteRemoteAddress);
  } catch (err) {
    throw new AclConfigError((err as AddressPatternError).message);
  }
  return {
    accessKey: c.accessKey,
    secretKey: c.secretKey,
    admin: c.admin,
    defaultTopicPerm: parsePerm(c.defaultTopicPerm),
    defaultGroupPerm: parsePerm(c.defaultGroupPerm),
    resourcePerms,
    whiteAddress,
  };
}

function asStringList(v: unknown, what: string): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw new AclConfigError(`${what} must be a list`);
  return v.map((x) => String(x));
}

function asAccount(v: unknown, i: number): PlainAccessConfig {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new AclConfigError(`accounts[${i}] must be a mapping`);
  const o = v as Record<string, unknown>;
  const str = (k: string) => (o[k] === undefined || o[k] === null ? undefined : String(o[k]));
  return {
    accessKey: str('accessKey') ?? '',
    secretKey: str('secretKey') ?? '',
    whiteRemoteAddress: str('whiteRemoteAddress'),
    admin: o.admin === true || String(o.admin).toLowerCase() === 'true',
    defaultTopicPerm: str('defaultTopicPerm'),
    defaultGroupPerm: str('defaultGroupPerm'),
    topicPerms: asStringList(o.topicPerms, `accounts[${i}].topicPerms`),
    groupPerms: asStringList(o.groupPerms, `accounts[${i}].groupPerms`),
  };
}

/** Parses the file's text; throws AclConfigError naming the line on a syntax error. An empty file is no data. */
export function parsePlainAclYaml(text: string): PlainAclFile {
  const { LineCounter, parseDocument } = yaml();
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: false });
  if (doc.errors.length > 0) {
    const e = doc.errors[0];
    const pos = lineCounter.linePos(e.pos[0]);
    throw new AclConfigError(`YAML syntax error at line ${pos.line}, column ${pos.col}: ${e.message.split('\n')[0]}`);
  }
  const data: unknown = doc.toJS();
  const out: PlainAclFile = { globalWhiteRemoteAddresses: [], accounts: [], dataVersion: { counter: 0, timestamp: Date.now() } };
  if (data === null || data === undefined) return out;
  if (typeof data !== 'object' || Array.isArray(data)) throw new AclConfigError('the file must be a YAML mapping');
  const o = data as Record<string, unknown>;
  out.globalWhiteRemoteAddresses = asStringList(o.globalWhiteRemoteAddresses, 'globalWhiteRemoteAddresses') ?? [];
  const accounts = o.accounts;
  if (accounts !== undefined && accounts !== null) {
    if (!Array.isArray(accounts)) throw new AclConfigError('accounts must be a list');
    out.accounts = accounts.map(asAccount);
  }
  const dv = o.dataVersion;
  if (Array.isArray(dv) && dv.length > 0 && dv[0] && typeof dv[0] === 'object') {
    const first = dv[0] as Record<string, unknown>;
    out.dataVersion = { counter: Number(first.counter ?? 0) || 0, timestamp: Number(first.timestamp ?? 0) || 0 };
  }
  return out;
}

/** The file as Java's AclUtils.writeDataObject leaves it (block style), keys in the official order. */
export function encodePlainAclYaml(f: PlainAclFile): string {
  const accounts = f.accounts.map((a) => {
    const o: Record<string, unknown> = { accessKey: a.accessKey, secretKey: a.secretKey };
    if (a.whiteRemoteAddress !== undefined) o.whiteRemoteAddress = a.whiteRemoteAddress;
    o.admin = a.admin;
    if (a.defaultTopicPerm) o.defaultTopicPerm = a.defaultTopicPerm;
    if (a.defaultGroupPerm) o.defaultGroupPerm = a.defaultGroupPerm;
    if (a.topicPerms) o.topicPerms = a.topicPerms;
    if (a.groupPerms) o.groupPerms = a.groupPerms;
    return o;
  });
  return yaml().stringify({
    globalWhiteRemoteAddresses: f.globalWhiteRemoteAddresses,
    accounts,
    dataVersion: [{ counter: f.dataVersion.counter, timestamp: f.dataVersion.timestamp }],
  });
}
