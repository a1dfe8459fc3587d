// ACL 2.0 admin codes 3001-3010 (Java AdminBrokerProcessor createUser .. listAcl; mqadmin 5.x createUser,
// updateUser, deleteUser, getUser, listUser, createAcl, updateAcl, deleteAcl, getAcl, listAcl). Bodies are the
// official UserInfo / AclInfo JSON. Auth failures answer NO_PERMISSION with the message (handleAuthException).
import { parseFastjson, stringifyFastjson } from '../../common/fastjson.js';
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { type RemotingCommand, createResponse } from '../../remoting/command.js';
import type { ProcessorTable } from '../../remoting/dispatcher.js';
import { ACCESS_KEY } from '../acl/signature.js';
import {
  type Acl,
  AuthError,
  type Policy,
  type PolicyEntry,
  type User,
  parseAction,
  parseDecision,
  parsePolicyType,
  parseResource,
  parseUserStatus,
  parseUserType,
  resourceKey,
} from '../auth/auth-model.js';
import type { AuthStore } from '../auth/auth-store.js';
import type { BrokerContext } from '../context.js';

interface UserInfo {
  username?: string;
  password?: string;
  userType?: string;
  userStatus?: string;
}
interface AclInfo {
  subject?: string;
  policies?: Array<{ policyType?: string; entries?: Array<{ resource?: string; actions?: string[]; sourceIps?: string[]; decision?: string }> }>;
}

const userInfo = (u: User) => ({ password: u.password, userStatus: u.userStatus, userType: u.userType, username: u.username });
const aclInfo = (a: Acl) => ({
  policies: a.policies.map((p) => ({
    // AclConverter: no source IPs = no environment = the field absent (mqadmin prints "null")
    entries: p.entries.map((e) => ({ actions: e.actions, decision: e.decision, resource: resourceKey(e.resource), sourceIps: e.sourceIps.length ? e.sourceIps : undefined })),
    policyType: p.policyType,
  })),
  subject: a.subject,
});

function body<T>(req: RemotingCommand): T | undefined {
  return req.body && req.body.length > 0 ? (parseFastjson(req.body.toString('utf8')) as T) : undefined;
}

/** AclConverter.convertAcl (policy type Custom unless given). */
function toAcl(subject: string, info: AclInfo | undefined): Acl {
  if (!info || !info.policies || info.policies.length === 0) throw new AuthError('The body of acl is null');
  return {
    subject: info.subject || subject,
    policies: info.policies.map(
      (p): Policy => ({
        policyType: parsePolicyType(p.policyType) ?? 'Custom',
        entries: (p.entries ?? []).map(
          (e): PolicyEntry => ({
            resource: parseResource(e.resource)!,
            actions: (e.actions ?? []).map((a) => parseAction(a)).filter((a) => a !== undefined),
            sourceIps: e.sourceIps ?? [],
            decision: parseDecision(e.decision)!,
          }),
        ),
      }),
    ),
  };
}

export function authAdminProcessors(ctx: BrokerContext, store: AuthStore | undefined): ProcessorTable {
  const run =
    (fn: (store: AuthStore, req: RemotingCommand) => Promise<RemotingCommand> | RemotingCommand) =>
    async (req: RemotingCommand): Promise<RemotingCommand> => {
      if (!store) return createResponse(ResponseCode.SYSTEM_ERROR, 'ACL 2.0 is off on this broker (authenticationEnabled / authorizationEnabled are false)');
      try {
        return await fn(store, req);
      } catch (err) {
        if (err instanceof AuthError) return createResponse(ResponseCode.NO_PERMISSION, err.message);
        ctx.logger.error({ err, code: req.code }, 'auth admin request failed');
        return createResponse(ResponseCode.SYSTEM_ERROR, 'An system error occurred, please try again later.');
      }
    };
  /** AdminBrokerProcessor.isNotSuperUserLogin: unsigned (authentication off) counts as allowed. */
  const notSuper = (store: AuthStore, req: RemotingCommand) => {
    const ak = req.extFields[ACCESS_KEY];
    return !!ak && !store.isSuperUser(ak);
  };
  const ok = (value?: unknown) => createResponse(ResponseCode.SUCCESS, undefined, {}, value === undefined ? undefined : Buffer.from(stringifyFastjson(value)));

  return [
    [RequestCode.AUTH_CREATE_USER, run(async (store, req) => {
      const username = req.extFields.username;
      if (!username) return createResponse(ResponseCode.INVALID_PARAMETER, 'The username is blank');
      const info = body<UserInfo>(req) ?? {};
      const user: User = { username, password: info.password ?? '', userType: parseUserType(info.userType) ?? 'Normal', userStatus: parseUserStatus(info.userStatus) ?? 'enable' };
      if (user.userType === 'Super' && notSuper(store, req)) return createResponse(ResponseCode.SYSTEM_ERROR, 'The super user can only be create by super user');
      await store.createUser(user);
      return ok();
    })],
    [RequestCode.AUTH_UPDATE_USER, run(async (store, req) => {
      const username = req.extFields.username;
      if (!username) return createResponse(ResponseCode.INVALID_PARAMETER, 'The username is blank');
      const info = body<UserInfo>(req) ?? {};
      const userType = parseUserType(info.userType);
      if (userType === 'Super' && notSuper(store, req)) return createResponse(ResponseCode.SYSTEM_ERROR, 'The super user can only be update by super user');
      const old = store.users.get(username);
      if (!old) throw new AuthError('The user is not exist');
      if (old.userType === 'Super' && notSuper(store, req)) throw new AuthError('The super user can only be update by super user');
      await store.updateUser({ username, password: info.password, userType, userStatus: parseUserStatus(info.userStatus) });
      return ok();
    })],
    [RequestCode.AUTH_DELETE_USER, run(async (store, req) => {
      const username = req.extFields.username ?? '';
      const old = store.users.get(username);
      if (!old) return ok();
      if (old.userType === 'Super' && notSuper(store, req)) throw new AuthError('The super user can only be update by super user');
      await store.deleteUser(username);
      return ok();
    })],
    [RequestCode.AUTH_GET_USER, run((store, req) => {
      const username = req.extFields.username;
      if (!username || username.trim() === '') return createResponse(ResponseCode.INVALID_PARAMETER, 'The username is blank');
      const user = store.users.get(username);
      return ok(user ? userInfo(user) : undefined);
    })],
    [RequestCode.AUTH_LIST_USER, run((store, req) => {
      const users = store.listUsers(req.extFields.filter);
      return ok(users.length ? users.map(userInfo) : undefined);
    })],
    [RequestCode.AUTH_CREATE_ACL, run(async (store, req) => {
      await store.upsertAcl(toAcl(req.extFields.subject ?? '', body<AclInfo>(req)));
      return ok();
    })],
    [RequestCode.AUTH_UPDATE_ACL, run(async (store, req) => {
      await store.upsertAcl(toAcl(req.extFields.subject ?? '', body<AclInfo>(req)));
      return ok();
    })],
    [RequestCode.AUTH_DELETE_ACL, run(async (store, req) => {
      await store.deleteAcl(req.extFields.subject ?? '', parsePolicyType(req.extFields.policyType), parseResource(req.extFields.resource));
      return ok();
    })],
    [RequestCode.AUTH_GET_ACL, run((store, req) => {
      const acl = store.acls.get(req.extFields.subject ?? '');
      return ok(acl ? aclInfo(acl) : undefined);
    })],
    [RequestCode.AUTH_LIST_ACL, run((store, req) => {
      const acls = store.listAcls(req.extFields.subjectFilter, req.extFields.resourceFilter);
      return ok(acls.length ? acls.map(aclInfo) : undefined);
    })],
  ];
}
