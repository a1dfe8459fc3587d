// KV config: PUT_KV_CONFIG 100, GET_KV_CONFIG 101, DELETE_KV_CONFIG 102, GET_KVLIST_BY_NAMESPACE 219.
// Java: namesrv/processor/DefaultRequestProcessor.java + kvconfig/KVConfigManager.java.
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { HeaderReader, type RemotingCommand, createResponse } from '../../remoting/command.js';
import type { NamesrvContext, ProcessorTable } from '../context.js';
import { encodeKvTable } from '../route-types.js';

export function kvConfigProcessors(ns: NamesrvContext): ProcessorTable {
  /** Java logs a failed write and still answers SUCCESS; we say so, the change stays in memory either way. */
  const persisted = async (write: Promise<void>): Promise<RemotingCommand> => {
    try {
      await write;
      return createResponse(ResponseCode.SUCCESS);
    } catch (err) {
      ns.logger.error({ err }, 'persist KV config failed');
      return createResponse(ResponseCode.SYSTEM_ERROR, `persist kvconfig failed (${(err as NodeJS.ErrnoException).code ?? 'error'}; see the nameserver log)`);
    }
  };

  const put = (req: RemotingCommand): Promise<RemotingCommand> => {
    const h = new HeaderReader(req.extFields);
    const namespace = h.str('namespace');
    const key = h.str('key');
    const value = h.str('value');
    return persisted(ns.kv.put(namespace, key, value));
  };

  const get = (req: RemotingCommand): RemotingCommand => {
    const h = new HeaderReader(req.extFields);
    const namespace = h.str('namespace');
    const key = h.str('key');
    const value = ns.kv.get(namespace, key);
    if (value !== undefined) return createResponse(ResponseCode.SUCCESS, undefined, { value });
    return createResponse(ResponseCode.QUERY_NOT_FOUND, `No config item, Namespace: ${namespace} Key: ${key}`);
  };

  const del = (req: RemotingCommand): Promise<RemotingCommand> => {
    const h = new HeaderReader(req.extFields);
    const namespace = h.str('namespace');
    const key = h.str('key');
    return persisted(ns.kv.delete(namespace, key));
  };

  const list = (req: RemotingCommand): RemotingCommand => {
    const namespace = new HeaderReader(req.extFields).str('namespace');
    const table = ns.kv.getNamespace(namespace);
    if (table) return createResponse(ResponseCode.SUCCESS, undefined, {}, encodeKvTable(new Map(table)));
    return createResponse(ResponseCode.QUERY_NOT_FOUND, `No config item, Namespace: ${namespace}`);
  };

  return [
    [RequestCode.PUT_KV_CONFIG, put],
    [RequestCode.GET_KV_CONFIG, get],
    [RequestCode.DELETE_KV_CONFIG, del],
    [RequestCode.GET_KVLIST_BY_NAMESPACE, list],
  ];
}
