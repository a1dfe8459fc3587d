// ACL 1.0 state (Java acl/plain/PlainPermissionManager for one file): loads `{rocketmqHome}/conf/plain_acl.yml`,
// reloads it when its content changes (Java AclFileWatchService polls and compares digests; so do we), keeps the
// last good version when a reload fails (the line is logged), and applies the admin codes' changes by rewriting
// the file (TableFile: temp file, fsync, .bak, rename) with the data version bumped.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type { Logger } from '../../common/logger.js';
import { TableFile } from '../../common/table-file.js';
import {
  AclConfigError,
  type OwnedAccess,
  type PlainAccessConfig,
  type PlainAclFile,
  buildOwnedAccess,
  checkKeys,
  checkResourcePerms,
  encodePlainAclYaml,
  parsePlainAclYaml,
} from './plain-acl-config.js';
import type { AclState } from './plain-access-validator.js';
import { AddressPatternError, compileAddressPattern } from './remote-address.js';

export type AclReloadEvent = { ok: true } | { ok: false; error: string };

function compile(file: PlainAclFile): AclState {
  const accounts = new Map<string, OwnedAccess>();
  for (const a of file.accounts) {
    // Java keeps the first account of a key and warns about the rest (PlainPermissionManager.load).
    if (!accounts.has(a.accessKey)) accounts.set(a.accessKey, buildOwnedAccess(a));
  }
  let globalWhite;
  try {
    globalWhite = file.globalWhiteRemoteAddresses.map((p) => compileAddressPattern(p));
  } catch (err) {
    throw new AclConfigError((err as AddressPatternError).message);
  }
  return { globalWhite, accounts };
}

export class PlainAclManager {
  private file: PlainAclFile = { globalWhiteRemoteAddresses: [], accounts: [], dataVersion: { counter: 0, timestamp: Date.now() } };
  private compiled: AclState = { globalWhite: [], accounts: new Map() };
  private digest = '';
  /** Admin-code writes not yet on disk: the file there is older than this.file, so the watcher must not reload it. */
  private writesInFlight = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners: Array<(e: AclReloadEvent) => void> = [];
  private readonly table: TableFile;

  constructor(
    readonly path: string,
    private readonly logger: Logger,
  ) {
    this.table = new TableFile(path, () => encodePlainAclYaml(this.file), logger, 'ACL file');
  }

  get state(): AclState {
    return this.compiled;
  }

  get config(): Readonly<PlainAclFile> {
    return this.file;
  }

  /** Start-up: a missing file is created empty (as Java does: then only white-listed peers get in); a bad one throws. */
  load(): void {
    if (!fs.existsSync(this.path)) {
      this.table.saveSync();
    }
    const text = fs.readFileSync(this.path, 'utf8');
    this.apply(text);
  }

  /** Polls the file every `intervalMs` and reloads it when its content changed. */
  watch(intervalMs: number): void {
    this.timer = setInterval(() => this.check(), intervalMs);
    this.timer.unref();
  }

  onReload(listener: (e: AclReloadEvent) => void): void {
    this.listeners.push(listener);
  }

  /** Reads the file now and reloads it if it changed (what the watcher does each interval). */
  check(): void {
    // Reading now would find the version before an admin change and revert it (and lose the next change's base).
    if (this.writesInFlight > 0) return;
    let text: string;
    try {
      text = fs.readFileSync(this.path, 'utf8');
    } catch (err) {
      this.emit({ ok: false, error: `cannot read ${this.path}: ${(err as Error).message}` });
      return;
    }
    if (sha(text) === this.digest) return;
    try {
      this.apply(text);
      this.logger.info({ file: this.path, accounts: this.compiled.accounts.size }, 'ACL file reloaded');
      this.emit({ ok: true });
    } catch (err) {
      this.digest = sha(text); // log a broken version once, not every interval
      const error = (err as Error).message;
      this.logger.error({ file: this.path, error }, 'ACL file not reloaded, keeping the last good version');
      this.emit({ ok: false, error });
    }
  }

  private apply(text: string): void {
    const parsed = parsePlainAclYaml(text);
    const compiled = compile(parsed);
    this.file = parsed;
    this.compiled = compiled;
    this.digest = sha(text);
  }

  private emit(e: AclReloadEvent): void {
    for (const l of this.listeners) l(e);
  }

  /** UPDATE_AND_CREATE_ACL_CONFIG: replaces the fields given for an existing key, or adds the account. */
  async updateAccessConfig(c: PlainAccessConfig): Promise<void> {
    checkKeys(c.accessKey, c.secretKey);
    checkResourcePerms(c.topicPerms);
    checkResourcePerms(c.groupPerms);
    const accounts = [...this.file.accounts];
    const i = accounts.findIndex((a) => a.accessKey === c.accessKey);
    const merged: PlainAccessConfig = i >= 0 ? { ...accounts[i] } : { accessKey: c.accessKey, secretKey: c.secretKey, admin: false };
    // Java createAclAccessConfigMap: given fields overwrite, absent ones stay.
    merged.secretKey = c.secretKey;
    if (c.whiteRemoteAddress !== undefined) merged.whiteRemoteAddress = c.whiteRemoteAddress;
    merged.admin = c.admin;
    if (c.defaultTopicPerm) merged.defaultTopicPerm = c.defaultTopicPerm;
    if (c.defaultGroupPerm) merged.defaultGroupPerm = c.defaultGroupPerm;
    if (c.topicPerms) merged.topicPerms = c.topicPerms;
    if (c.groupPerms) merged.groupPerms = c.groupPerms;
    buildOwnedAccess(merged); // throws on a bad white address
    if (i >= 0) accounts.splice(i, 1);
    accounts.push(merged);
    await this.write({ ...this.file, accounts });
  }

  /** DELETE_ACL_CONFIG: false when the key is unknown. */
  async deleteAccessConfig(accessKey: string): Promise<boolean> {
    const accounts = this.file.accounts.filter((a) => a.accessKey !== accessKey);
    if (accounts.length === this.file.accounts.length) return false;
    await this.write({ ...this.file, accounts });
    return true;
  }

  /** UPDATE_GLOBAL_WHITE_ADDRS_CONFIG. */
  async updateGlobalWhiteAddrs(addrs: string[]): Promise<void> {
    await this.write({ ...this.file, globalWhiteRemoteAddresses: addrs });
  }

  private async write(next: PlainAclFile): Promise<void> {
    const compiled = compile(next);
    next.dataVersion = { counter: next.dataVersion.counter + 1, timestamp: Date.now() };
    this.file = next;
    this.compiled = compiled;
    this.digest = sha(encodePlainAclYaml(next));
    this.table.changed();
    this.writesInFlight++;
    try {
      await this.table.save();
    } finally {
      this.writesInFlight--;
    }
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.table.idle();
  }
}

function sha(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
