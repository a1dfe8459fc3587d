// LOCK_BATCH_MQ (41), UNLOCK_BATCH_MQ (42): orderly consumers' queue locks.
// Java: broker/processor/AdminBrokerProcessor.lockBatchMQ/unlockBatchMQ, remoting/protocol/body/LockBatchRequestBody.
import { stringifyFastjson } from '../../common/fastjson.js';
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { type RemotingCommand, createResponse } from '../../remoting/command.js';
import type { ProcessorTable } from '../../remoting/dispatcher.js';
import type { MessageQueue } from '../client/types.js';
import type { BrokerContext } from '../context.js';
import { BodyError, asObject, field, parseJsonBody, withBodyErrors } from './client-manage.js';

export interface LockBatchRequest {
  consumerGroup: string;
  clientId: string;
  /** 5.x: with lockInStrictMode the Java broker also locks the replicas unless this is set. We have no replicas. */
  onlyThisBroker: boolean;
  mqSet: MessageQueue[];
}

export function decodeMessageQueue(raw: unknown, what: string): MessageQueue {
  const o = asObject(raw, what);
  const topic = field(o, 'topic');
  const brokerName = field(o, 'brokerName');
  const queueId = field(o, 'queueId');
  if (typeof topic !== 'string' || topic === '') throw new BodyError(`${what}.topic is missing`);
  if (typeof brokerName !== 'string') throw new BodyError(`${what}.brokerName is missing`);
  const qid = typeof queueId === 'string' && queueId.trim() !== '' ? Number(queueId) : queueId;
  if (typeof qid !== 'number' || !Number.isInteger(qid)) throw new BodyError(`${what}.queueId must be an integer`);
  return { brokerName, queueId: qid, topic };
}

/** LockBatchRequestBody / UnlockBatchRequestBody (same shape). */
export function decodeLockBatchRequest(raw: unknown, what: string): LockBatchRequest {
  const o = asObject(raw, `${what} body`);
  const consumerGroup = field(o, 'consumerGroup');
  const clientId = field(o, 'clientId');
  if (typeof consumerGroup !== 'string' || consumerGroup === '') throw new BodyError(`${what}: consumerGroup is missing`);
  if (typeof clientId !== 'string' || clientId === '') throw new BodyError(`${what}: clientId is missing`);
  const rawSet = field(o, 'mqSet');
  if (rawSet !== undefined && rawSet !== null && !Array.isArray(rawSet)) throw new BodyError(`${what}: mqSet must be a JSON array`);
  const mqSet = ((rawSet as unknown[] | undefined) ?? []).map((m, i) => decodeMessageQueue(m, `${what}: mqSet[${i}]`));
  const only = field(o, 'onlyThisBroker');
  return { consumerGroup, clientId, onlyThisBroker: only === true || only === 'true', mqSet };
}

function lockBatch(ctx: BrokerContext, req: RemotingCommand): RemotingCommand {
  const body = decodeLockBatchRequest(parseJsonBody(req, 'LOCK_BATCH_MQ'), 'LOCK_BATCH_MQ');
  const locked = ctx.rebalanceLockManager.tryLockBatch(body.consumerGroup, body.mqSet, body.clientId);
  return createResponse(ResponseCode.SUCCESS, undefined, {}, Buffer.from(stringifyFastjson({ lockOKMQSet: locked })));
}

function unlockBatch(ctx: BrokerContext, req: RemotingCommand): RemotingCommand {
  const body = decodeLockBatchRequest(parseJsonBody(req, 'UNLOCK_BATCH_MQ'), 'UNLOCK_BATCH_MQ');
  ctx.rebalanceLockManager.unlockBatch(body.consumerGroup, body.mqSet, body.clientId);
  return createResponse(ResponseCode.SUCCESS);
}

export function lockProcessors(ctx: BrokerContext): ProcessorTable {
  return [
    [RequestCode.LOCK_BATCH_MQ, (req) => withBodyErrors(() => lockBatch(ctx, req))],
    // Often oneway (client shutdown / queue dropped); the server never answers a oneway request.
    [RequestCode.UNLOCK_BATCH_MQ, (req) => withBodyErrors(() => unlockBatch(ctx, req))],
  ];
}
