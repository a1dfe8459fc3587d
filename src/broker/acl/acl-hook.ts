// ACL 1.0 as a dispatcher hook (Java BrokerController.initialAcl registers an RPCHook whose doBeforeRequest
// throws AclException; NettyRemotingAbstract answers SYSTEM_ERROR with RemotingHelper.exceptionSimpleDesc).
import type { Logger } from '../../common/logger.js';
import { ResponseCode } from '../../common/response-code.js';
import { type RemotingCommand, createResponse } from '../../remoting/command.js';
import type { RequestContext, RequestHook } from '../../remoting/dispatcher.js';
import { denialRemark, validatePlainAccess } from './plain-access-validator.js';
import type { PlainAclManager } from './plain-acl-manager.js';

/** `ip` of an `ip:port` remote address (Java PlainAccessValidator.parse cuts at the last colon). */
export function hostOf(remoteAddress: string): string {
  const i = remoteAddress.lastIndexOf(':');
  return i < 0 ? remoteAddress : remoteAddress.slice(0, i);
}

export function plainAclHook(acl: PlainAclManager, logger: Logger): RequestHook {
  return {
    before(req: RemotingCommand, ctx: RequestContext): RemotingCommand | undefined {
      const denial = validatePlainAccess(acl.state, req, hostOf(ctx.channel.remoteAddress));
      if (!denial) return undefined;
      logger.warn({ peer: ctx.channel.remoteAddress, code: req.code, reason: denial.message }, 'request denied by ACL');
      return createResponse(ResponseCode.SYSTEM_ERROR, denialRemark(denial));
    },
  };
}
