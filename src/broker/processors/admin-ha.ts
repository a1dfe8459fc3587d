// What a master serves its slaves and tools about replication (Java AdminBrokerProcessor): GET_ALL_DELAY_OFFSET (45),
// GET_TIMER_CHECK_POINT (60) and GET_TIMER_METRICS (61) for a 5.3.3 slave's metadata sync (it asks 60 and 61 on
// the VIP port), GET_ALL_MESSAGE_REQUEST_MODE (402, 5.3.3 sync: empty here, POP's request modes are not kept),
// GET_BROKER_HA_STATUS (907, mqadmin haStatus) and GET_BROKER_EPOCH_CACHE (1007, mqadmin getBrokerEpoch: refused as
// the official broker refuses it outside controller mode, which we do not have). GET_ALL_TOPIC_CONFIG / _CONSUMER_OFFSET / _SUBSCRIPTIONGROUP_CONFIG
// are with their families.
import { stringifyFastjson } from '../../common/fastjson.js';
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { type RemotingCommand, createResponse } from '../../remoting/command.js';
import type { ProcessorTable } from '../../remoting/dispatcher.js';
import type { BrokerContext } from '../context.js';
import { encodeTimerCheckpoint } from '../timer/timer-checkpoint.js';

/** Java TimerCheckpoint.encode: seven int64s. */
const TIMER_CHECKPOINT_WIRE_BYTES = 56;

function ok(body: string | Buffer): RemotingCommand {
  return createResponse(ResponseCode.SUCCESS, undefined, {}, typeof body === 'string' ? Buffer.from(body, 'utf8') : body);
}

function timerCheckPoint(ctx: BrokerContext): RemotingCommand {
  const timer = ctx.timerMessageService;
  if (!timer || !ctx.config.timerWheelEnable) return createResponse(ResponseCode.SYSTEM_ERROR, 'The checkpoint is null');
  return ok(encodeTimerCheckpoint(timer.checkpointForSlave()).subarray(0, TIMER_CHECKPOINT_WIRE_BYTES));
}

function timerMetrics(ctx: BrokerContext): RemotingCommand {
  if (!ctx.timerMessageService || !ctx.config.timerWheelEnable) return createResponse(ResponseCode.SYSTEM_ERROR, 'The timer message store is null');
  // TimerMetrics counts parked messages per topic; ours keeps no such counts. An empty table, versioned at start.
  return ok(stringifyFastjson({ dataVersion: { counter: 0, stateVersion: 0, timestamp: ctx.startTimeMs }, timingCount: {} }));
}

function haStatus(ctx: BrokerContext): RemotingCommand {
  if (!ctx.ha) return createResponse(ResponseCode.SYSTEM_ERROR, 'Can not get HARuntimeInfo, may be duplicationEnable is true');
  return ok(stringifyFastjson(ctx.ha.runtimeInfo()));
}

export function adminHaProcessors(ctx: BrokerContext): ProcessorTable {
  return [
    [RequestCode.GET_ALL_DELAY_OFFSET, () => ok(ctx.scheduleMessageService.encode())],
    [RequestCode.GET_TIMER_CHECK_POINT, () => timerCheckPoint(ctx)],
    [RequestCode.GET_TIMER_METRICS, () => timerMetrics(ctx)],
    [RequestCode.GET_ALL_MESSAGE_REQUEST_MODE, () => ok('{"messageRequestModeMap":{}}')],
    [RequestCode.GET_BROKER_HA_STATUS, () => haStatus(ctx)],
    // Java's remark, trailing space included
    [RequestCode.GET_BROKER_EPOCH_CACHE, () => createResponse(ResponseCode.SYSTEM_ERROR, 'this request only for controllerMode ')],
  ];
}
