// QUERY_ASSIGNMENT (400), SET_MESSAGE_REQUEST_MODE (401) and GET_ALL_MESSAGE_REQUEST_MODE (402): decode →
// AssignmentService → encode (Java QueryAssignmentProcessor; 402 is AdminBrokerProcessor.getAllMessageRequestMode).
import { parseFastjson, stringifyFastjson } from '../../common/fastjson.js';
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import type { RemotingClient } from '../../remoting/client.js';
import { createRequest, createResponse } from '../../remoting/command.js';
import type { ProcessorTable } from '../../remoting/dispatcher.js';
import { parseNamesrvAddrs } from '../namesrv-registration.js';
import type { AssignmentService, RouteFetcher, RouteQueueData } from '../pop/assignment-service.js';
import { isRequestMode } from '../pop/request-mode-manager.js';
import { BodyError, field, parseJsonBody } from './client-manage.js';

const str = (o: Record<string, unknown>, name: string): string => {
  const v = field(o, name);
  return v === undefined || v === null ? '' : String(v);
};

function object(req: { body?: Buffer }, what: string): Record<string, unknown> {
  const v = parseJsonBody(req as never, what);
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new BodyError(`${what}: request body must be a JSON object`);
  return v as Record<string, unknown>;
}

export function queryAssignmentProcessors(assignments: AssignmentService): ProcessorTable {
  return [
    [RequestCode.QUERY_ASSIGNMENT, async (req) => {
      let o: Record<string, unknown>;
      try {
        o = object(req, 'QUERY_ASSIGNMENT');
      } catch (err) {
        if (err instanceof BodyError) return createResponse(ResponseCode.SYSTEM_ERROR, err.message);
        throw err;
      }
      const assigned = await assignments.queryAssignment({
        topic: str(o, 'topic'),
        consumerGroup: str(o, 'consumerGroup'),
        clientId: str(o, 'clientId'),
        strategyName: str(o, 'strategyName'),
        messageModel: str(o, 'messageModel') || 'CLUSTERING',
      });
      // QueryAssignmentResponseBody: messageQueueAssignments is left out when null (unknown topic, no group, …)
      const body = stringifyFastjson({ messageQueueAssignments: assigned });
      return createResponse(ResponseCode.SUCCESS, undefined, {}, Buffer.from(body));
    }],
    [RequestCode.SET_MESSAGE_REQUEST_MODE, (req) => {
      let o: Record<string, unknown>;
      try {
        o = object(req, 'SET_MESSAGE_REQUEST_MODE');
      } catch (err) {
        if (err instanceof BodyError) return createResponse(ResponseCode.SYSTEM_ERROR, err.message);
        throw err;
      }
      const mode = field(o, 'mode') ?? 'PULL';
      if (!isRequestMode(mode)) return createResponse(ResponseCode.SYSTEM_ERROR, `SET_MESSAGE_REQUEST_MODE: unknown mode ${String(mode)} (PULL or POP)`);
      const refused = assignments.setRequestMode({
        topic: str(o, 'topic'),
        consumerGroup: str(o, 'consumerGroup'),
        mode,
        popShareQueueNum: Number(field(o, 'popShareQueueNum') ?? 0) || 0,
      });
      return refused ? createResponse(refused.code, refused.remark) : createResponse(ResponseCode.SUCCESS);
    }],
    [RequestCode.GET_ALL_MESSAGE_REQUEST_MODE, () =>
      createResponse(ResponseCode.SUCCESS, undefined, {}, Buffer.from(assignments.modes.encode()))],
  ];
}

/** Asks the nameservers (in order) for a topic's route; the queue datas of the first answer (Java TopicRouteInfoManager). */
export function namesrvRouteFetcher(client: RemotingClient, namesrvAddr: () => string): RouteFetcher {
  return async (topic) => {
    let lastError: unknown;
    for (const addr of parseNamesrvAddrs(namesrvAddr())) {
      try {
        const res = await client.request(addr, createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic }), 3000);
        if (res.code === ResponseCode.TOPIC_NOT_EXIST) return undefined;
        if (res.code !== ResponseCode.SUCCESS || !res.body) continue;
        const route = parseFastjson(res.body) as { queueDatas?: Array<Record<string, unknown>> };
        return (route.queueDatas ?? []).map((q): RouteQueueData => ({
          brokerName: String(q.brokerName ?? ''), readQueueNums: Number(q.readQueueNums ?? 0) || 0, perm: Number(q.perm ?? 0) || 0,
        }));
      } catch (err) {
        lastError = err;
      }
    }
    if (lastError) throw lastError;
    return undefined;
  };
}
