// ACL 2.0 metadata: users and ACLs (Java AuthenticationMetadataManagerImpl / AuthorizationMetadataManagerImpl with
// their checks and messages). The official broker keeps them in RocksDB under authConfigPath; ours is one JSON
// table file (TableFile: temp file, fsync, .bak, rename) in the same directory, not readable by the other.
import path from 'node:path';
import type { Logger } from '../../common/logger.js';
import { TableFile } from '../../common/table-file.js';
import {
  type Acl,
  AuthError,
  type Policy,
  type PolicyEntry,
  type Resource,
  type User,
  isValidSourceIp,
  parseResource,
  resourceKey,
} from './auth-model.js';

interface Persisted {
  users: User[];
  acls: Array<{ subject: string; policies: Array<{ policyType: string; entries: Array<{ resource: string; actions: string[]; sourceIps: string[]; decision: string }> }> }>;
}

export class AuthStore {
  readonly users = new Map<string, User>();
  readonly acls = new Map<string, Acl>();
  private readonly file: TableFile;

  constructor(dir: string, logger: Logger) {
    this.file = new TableFile(path.join(dir, 'auth.json'), () => this.encode(), logger, 'users and ACLs');
  }

  load(): void {
    const data = this.file.load() as Persisted | undefined;
    for (const u of data?.users ?? []) this.users.set(u.username, u);
    for (const a of data?.acls ?? []) {
      this.acls.set(a.subject, {
        subject: a.subject,
        policies: a.policies.map((p) => ({
          policyType: p.policyType as Policy['policyType'],
          entries: p.entries.map((e) => ({ resource: parseResource(e.resource)!, actions: e.actions as PolicyEntry['actions'], sourceIps: e.sourceIps, decision: e.decision as PolicyEntry['decision'] })),
        })),
      });
    }
  }

  private encode(): string {
    const out: Persisted = {
      users: [...this.users.values()],
      acls: [...this.acls.values()].map((a) => ({
        subject: a.subject,
        policies: a.policies.map((p) => ({ policyType: p.policyType, entries: p.entries.map((e) => ({ ...e, resource: resourceKey(e.resource) })) })),
      })),
    };
    return JSON.stringify(out, null, 2);
  }

  private save(): Promise<void> {
    this.file.changed();
    return this.file.save();
  }

  close(): Promise<void> {
    return this.file.close(true);
  }

  isSuperUser(username: string): boolean {
    return this.users.get(username)?.userType === 'Super';
  }

  private static validateUser(u: User): void {
    if (!u.username || u.username.trim() === '') throw new AuthError('username can not be blank');
    if (!u.password || u.password.trim() === '') throw new AuthError('password can not be blank');
  }

  /** initAuthenticationUser: a super user created at start when absent. */
  async initUser(u: User): Promise<void> {
    if (this.users.has(u.username)) return;
    this.users.set(u.username, u);
    await this.save();
  }

  async createUser(u: User): Promise<void> {
    AuthStore.validateUser(u);
    if (this.users.has(u.username)) throw new AuthError('The user is existed');
    this.users.set(u.username, u);
    await this.save();
  }

  async updateUser(u: Partial<User> & { username: string }): Promise<void> {
    if (!u.username || u.username.trim() === '') throw new AuthError('username can not be blank');
    const old = this.users.get(u.username);
    if (!old) throw new AuthError('The user is not exist');
    // Java updateUser: only the fields given change
    this.users.set(u.username, {
      username: old.username,
      password: u.password || old.password,
      userType: u.userType ?? old.userType,
      userStatus: u.userStatus ?? old.userStatus,
    });
    await this.save();
  }

  async deleteUser(username: string): Promise<void> {
    if (!username || username.trim() === '') throw new AuthError('username can not be blank');
    this.users.delete(username);
    this.acls.delete(`User:${username}`);
    await this.save();
  }

  listUsers(filter: string | undefined): User[] {
    return [...this.users.values()].filter((u) => !filter || u.username.includes(filter));
  }

  /** AuthorizationMetadataManagerImpl.validate. */
  private static validateAcl(acl: Acl): void {
    if (!acl.subject.startsWith('User:')) throw new AuthError('The subject type is null.');
    if (acl.policies.length === 0) throw new AuthError('The policies is empty.');
    for (const p of acl.policies) {
      if (p.entries.length === 0) throw new AuthError('The policy entries is empty.');
      for (const e of p.entries) {
        if (!e.resource) throw new AuthError('The resource is null.');
        if (e.actions.length === 0) throw new AuthError('The actions is empty.');
        if (e.actions.includes('Any')) throw new AuthError('The actions can not be Any.');
        for (const ip of e.sourceIps) {
          if (!ip) throw new AuthError('The source ip is empty.');
          if (!isValidSourceIp(ip)) throw new AuthError('The source ip is invalid.');
        }
        if (!e.decision) throw new AuthError('The decision is null or illegal.');
      }
    }
  }

  /** createAcl / updateAcl: both merge into an existing ACL (Acl.updatePolicy → Policy.updateEntry by resource). */
  async upsertAcl(acl: Acl): Promise<void> {
    AuthStore.validateAcl(acl);
    const username = acl.subject.slice('User:'.length);
    if (!this.users.has(username)) throw new AuthError(`The subject of ${acl.subject} is not exist.`);
    const old = this.acls.get(acl.subject);
    if (!old) {
      this.acls.set(acl.subject, acl);
    } else {
      for (const np of acl.policies) {
        const op = old.policies.find((p) => p.policyType === np.policyType);
        if (!op) {
          old.policies.push(np);
          continue;
        }
        for (const ne of np.entries) {
          const oe = op.entries.find((e) => resourceKey(e.resource) === resourceKey(ne.resource));
          if (!oe) op.entries.push(ne);
          else Object.assign(oe, { actions: ne.actions, sourceIps: ne.sourceIps, decision: ne.decision });
        }
      }
    }
    await this.save();
  }

  /** deleteAcl(subject, policyType, resource): the whole ACL, one policy, or one entry. */
  async deleteAcl(subject: string, policyType: Policy['policyType'] | undefined, resource: Resource | undefined): Promise<void> {
    if (!subject) throw new AuthError('The subject is null.');
    if (!this.users.has(subject.slice('User:'.length))) throw new AuthError('The subject is not exist.');
    const acl = this.acls.get(subject);
    if (!acl) throw new AuthError('The acl is not exist.');
    if (!resource) {
      if (policyType) acl.policies = acl.policies.filter((p) => p.policyType !== policyType);
      else this.acls.delete(subject);
    } else {
      for (const p of acl.policies) {
        if (policyType && p.policyType !== policyType) continue;
        p.entries = p.entries.filter((e) => resourceKey(e.resource) !== resourceKey(resource));
      }
      acl.policies = acl.policies.filter((p) => p.entries.length > 0);
      if (acl.policies.length === 0) this.acls.delete(subject);
    }
    await this.save();
  }

  listAcls(subjectFilter: string | undefined, resourceFilter: string | undefined): Acl[] {
    return [...this.acls.values()].filter(
      (a) =>
        (!subjectFilter || a.subject.includes(subjectFilter)) &&
        (!resourceFilter || a.policies.some((p) => p.entries.some((e) => resourceKey(e.resource).includes(resourceFilter)))),
    );
  }
}
