// GET_NAMESRV_CONFIG 319 and UPDATE_NAMESRV_CONFIG 318 (mqadmin getNamesrvConfig / updateNamesrvConfig).
// Java: namesrv/processor/DefaultRequestProcessor.java (getConfig, updateConfig).
import { ConfigError, NAMESRV_SCHEMA, applySettings, parseProperties } from '../../common/config.js';
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { type RemotingCommand, createResponse } from '../../remoting/command.js';
import type { RequestContext } from '../../remoting/dispatcher.js';
import type { NamesrvContext, ProcessorTable } from '../context.js';

/** Keys a remote update may not touch (Java: DefaultRequestProcessor.initConfigBlackList defaults). */
const CONFIG_BLACK_LIST = new Set(['configBlackList', 'configStorePath', 'kvConfigPath', 'rocketmqHome']);

/** `key=value` lines, sorted (Java: MixAll.properties2String over the namesrv's config objects). */
export function namesrvConfigText(config: Record<string, unknown>): string {
  return Object.keys(config)
    .sort()
    .map((k) => `${k}=${String(config[k])}\n`)
    .join('');
}

export function namesrvConfigProcessors(ns: NamesrvContext): ProcessorTable {
  const getConfig = (): RemotingCommand =>
    createResponse(ResponseCode.SUCCESS, undefined, {}, Buffer.from(namesrvConfigText(ns.config), 'utf8'));

  /** Applied in memory only (Java also persists to configStorePath); listenPort and the scan interval need a restart. */
  const updateConfig = (req: RemotingCommand, ctx: RequestContext): RemotingCommand => {
    if (!req.body || req.body.length === 0) return createResponse(ResponseCode.SUCCESS);
    const props = parseProperties(req.body.toString('utf8'));
    if (Object.keys(props).some((k) => CONFIG_BLACK_LIST.has(k))) {
      return createResponse(ResponseCode.NO_PERMISSION, 'Can not update config in black list.');
    }
    try {
      const next = { ...ns.config };
      const unknown = applySettings(NAMESRV_SCHEMA, next, props);
      Object.assign(ns.config, next);
      ns.logger.info({ client: ctx.channel.remoteAddress, props, ignored: unknown }, 'namesrv config updated');
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      return createResponse(ResponseCode.SYSTEM_ERROR, err.message);
    }
    return createResponse(ResponseCode.SUCCESS);
  };

  return [
    [RequestCode.GET_NAMESRV_CONFIG, getConfig],
    [RequestCode.UPDATE_NAMESRV_CONFIG, updateConfig],
  ];
}
