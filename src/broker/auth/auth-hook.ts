// ACL 2.0 as a dispatcher hook (Java broker AuthenticationPipeline then AuthorizationPipeline: an
// AuthenticationException / AuthorizationException becomes NO_PERMISSION (16) with its message as the remark).
import type { Logger } from '../../common/logger.js';
import { ResponseCode } from '../../common/response-code.js';
import { MQVersion } from '../../common/version.js';
import { type RemotingCommand, createResponse } from '../../remoting/command.js';
import type { RequestContext, RequestHook } from '../../remoting/dispatcher.js';
import { hostOf } from '../acl/acl-hook.js';
import { ACCESS_KEY, SIGNATURE, calSignature } from '../acl/signature.js';
import { authzNeeds } from './auth-context.js';
import { decidingEntry, resourceKey } from './auth-model.js';
import type { AuthStore } from './auth-store.js';

export interface AuthSettings {
  authenticationEnabled: boolean;
  authorizationEnabled: boolean;
  /** Request codes exempt from each check (Java authenticationWhitelist / authorizationWhitelist). */
  authenticationWhitelist: ReadonlySet<number>;
  authorizationWhitelist: ReadonlySet<number>;
  clusterName: string;
}

/** DefaultAuthenticationContextBuilder: sorted header values without the signature (and, from clients up to
 * 4.9.3, without _UNIQUE_KEY_QUERY), then the body. */
function signedContent(req: RemotingCommand): Buffer {
  const skipUnique = req.version <= MQVersion.V4_9_3;
  let text = '';
  for (const k of Object.keys(req.extFields).sort()) {
    if (k === SIGNATURE || (skipUnique && k === '_UNIQUE_KEY_QUERY')) continue;
    text += req.extFields[k];
  }
  const head = Buffer.from(text, 'utf8');
  return req.body && req.body.length > 0 ? Buffer.concat([head, req.body]) : head;
}

/** DefaultAuthenticationHandler; a message = denied. */
export function authenticate(store: AuthStore, req: RemotingCommand): string | undefined {
  const username = req.extFields[ACCESS_KEY];
  if (!username) return 'username cannot be null.';
  const user = store.users.get(username);
  if (!user) return `User:${username} is not found.`;
  if (user.userStatus === 'disable') return `User:${username} is disabled.`;
  const signature = req.extFields[SIGNATURE];
  if (signature === undefined || calSignature(signedContent(req), user.password) !== signature) return 'check signature failed.';
  return undefined;
}

/** UserAuthorizationHandler + AclAuthorizationHandler for every resource the request needs. */
export function authorize(store: AuthStore, req: RemotingCommand, sourceIp: string, clusterName: string): string | undefined {
  let needs;
  try {
    needs = authzNeeds(req, clusterName);
  } catch {
    return 'parse authorization context error.'; // DefaultAuthorizationContextBuilder: denied, not waved through
  }
  if (needs.length === 0) return undefined;
  const username = req.extFields[ACCESS_KEY];
  if (username === undefined) return 'Authorization failed. Please verify your access rights and try again.';
  for (const need of needs) {
    const user = store.users.get(username);
    if (!user) return `User:${username} not found.`;
    if (user.userStatus === 'disable') return `User:${username} is disabled.`;
    if (user.userType === 'Super') continue;
    const deny = (detail: string) => `User:${username} has no permission to access ${resourceKey(need.resource)} from ${sourceIp}, ${detail}`;
    const acl = store.acls.get(`User:${username}`);
    if (!acl) return deny('no matched policies.');
    const entry = decidingEntry(acl, need.resource, need.actions, sourceIp);
    if (!entry) return deny('no matched policies.');
    if (entry.decision === 'Deny') return deny('the decision is deny.');
  }
  return undefined;
}

export function authHook(store: AuthStore, s: AuthSettings, logger: Logger): RequestHook {
  return {
    before(req: RemotingCommand, ctx: RequestContext): RemotingCommand | undefined {
      let denial: string | undefined;
      if (s.authenticationEnabled && !s.authenticationWhitelist.has(req.code)) denial = authenticate(store, req);
      if (!denial && s.authorizationEnabled && !s.authorizationWhitelist.has(req.code)) {
        denial = authorize(store, req, hostOf(ctx.channel.remoteAddress), s.clusterName);
      }
      if (!denial) return undefined;
      logger.warn({ peer: ctx.channel.remoteAddress, code: req.code, user: req.extFields[ACCESS_KEY], reason: denial }, 'request denied (ACL 2.0)');
      return createResponse(ResponseCode.NO_PERMISSION, denial);
    },
  };
}
