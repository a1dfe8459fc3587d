// ACL 1.0 admin codes (Java AdminBrokerProcessor: updateAndCreateAccessConfig, deleteAccessConfig,
// getBrokerAclConfigVersion, updateGlobalWhiteAddrsConfig; mqadmin updateAclConfig, deleteAclConfig,
// clusterAclConfigVersion, updateGlobalWhiteAddr).
import { stringifyFastjson } from '../../common/fastjson.js';
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { HeaderReader, type RemotingCommand, createResponse } from '../../remoting/command.js';
import type { ProcessorTable } from '../../remoting/dispatcher.js';
import type { PlainAclManager } from '../acl/plain-acl-manager.js';
import type { BrokerContext } from '../context.js';

/**
 * 4.9.x ResponseCode values for the ACL admin failures. Kept here, not in the shared table: 5.x reuses 209-211 for
 * POLLING_FULL, POLLING_TIMEOUT and BROKER_NOT_EXIST.
 */
const AclResponse = {
  UPDATE_AND_CREATE_ACL_CONFIG_FAILED: 209,
  DELETE_ACL_CONFIG_FAILED: 210,
  UPDATE_GLOBAL_WHITE_ADDRS_CONFIG_FAILED: 211,
} as const;

/** Java UtilAll.split: null stays null, blank is empty. */
function splitList(s: string | undefined): string[] | undefined {
  if (s === undefined) return undefined;
  if (s.trim() === '') return [];
  return s.split(',');
}

const NOT_ENABLED = 'ACL is not enabled on this broker (aclEnable=false)';

export function aclAdminProcessors(ctx: BrokerContext, acl: PlainAclManager | undefined): ProcessorTable {
  const guard =
    (failCode: number, fn: (acl: PlainAclManager, req: RemotingCommand) => Promise<RemotingCommand>) =>
    async (req: RemotingCommand): Promise<RemotingCommand> => {
      if (!acl) return createResponse(failCode, NOT_ENABLED);
      try {
        return await fn(acl, req);
      } catch (err) {
        ctx.logger.warn({ err: (err as Error).message, code: req.code }, 'ACL admin request failed');
        return createResponse(failCode, (err as Error).message);
      }
    };

  const update = guard(AclResponse.UPDATE_AND_CREATE_ACL_CONFIG_FAILED, async (acl, req) => {
    const h = new HeaderReader(req.extFields);
    await acl.updateAccessConfig({
      accessKey: h.str('accessKey'),
      secretKey: h.optStr('secretKey') ?? '',
      whiteRemoteAddress: h.optStr('whiteRemoteAddress'),
      admin: h.bool('admin'),
      defaultTopicPerm: h.optStr('defaultTopicPerm'),
      defaultGroupPerm: h.optStr('defaultGroupPerm'),
      topicPerms: splitList(h.optStr('topicPerms')),
      groupPerms: splitList(h.optStr('groupPerms')),
    });
    return createResponse(ResponseCode.SUCCESS);
  });

  const del = guard(AclResponse.DELETE_ACL_CONFIG_FAILED, async (acl, req) => {
    const accessKey = new HeaderReader(req.extFields).str('accessKey');
    if (await acl.deleteAccessConfig(accessKey)) return createResponse(ResponseCode.SUCCESS);
    return createResponse(AclResponse.DELETE_ACL_CONFIG_FAILED, `The accesskey[${accessKey}] corresponding to accessConfig has been deleted failed.`);
  });

  const white = guard(AclResponse.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG_FAILED, async (acl, req) => {
    const h = new HeaderReader(req.extFields);
    await acl.updateGlobalWhiteAddrs(splitList(h.str('globalWhiteAddrs')) ?? []);
    return createResponse(ResponseCode.SUCCESS);
  });

  const version = guard(ResponseCode.SYSTEM_ERROR, async (acl) => {
    const dv = acl.config.dataVersion;
    const v = { counter: dv.counter, timestamp: dv.timestamp };
    return createResponse(ResponseCode.SUCCESS, undefined, {
      version: stringifyFastjson(v),
      allAclFileVersion: stringifyFastjson({ [acl.path]: v }),
      brokerAddr: ctx.brokerAddr(),
      brokerName: ctx.config.brokerName,
      clusterName: ctx.config.brokerClusterName,
    });
  });

  return [
    [RequestCode.UPDATE_AND_CREATE_ACL_CONFIG, update],
    [RequestCode.DELETE_ACL_CONFIG, del],
    [RequestCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG, white],
    [RequestCode.GET_BROKER_CLUSTER_ACL_INFO, version],
  ];
}
