import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { HeaderReader, type RemotingCommand, createResponse } from '../../remoting/command.js';
import type { ProcessorTable, RequestContext } from '../../remoting/dispatcher.js';
import type { GetResult } from '../../store/index.js';
import type { BrokerContext } from '../context.js';
import { FLAG_SUSPEND, type PullRequest, type Pulled, arrivalFilter, pullAnswer, pullMessage } from '../pull/pull-service.js';
import { isRefusal } from '../outcome.js';

function readPullHeader(req: RemotingCommand, peer: string): PullRequest {
  const h = new HeaderReader(req.extFields);
  return {
    consumerGroup: h.str('consumerGroup'),
    topic: h.str('topic'),
    queueId: h.int('queueId'),
    queueOffset: h.long('queueOffset'),
    maxMsgNums: h.int('maxMsgNums'),
    sysFlag: h.int('sysFlag'),
    commitOffset: h.optLong('commitOffset', 0) ?? 0,
    suspendTimeoutMillis: h.optLong('suspendTimeoutMillis', 15000) ?? 15000,
    subscription: h.optStr('subscription'),
    subVersion: h.optLong('subVersion', 0) ?? 0,
    expressionType: h.optStr('expressionType'),
    peer,
  };
}

/** The answer to a pull, or "park it" (nothing found, suspension allowed: long polling). */
type Answer = RemotingCommand | { park: Pulled };

/** Java PullMessageProcessor: PULL_MESSAGE (11) and LITE_PULL_MESSAGE (361), with long polling. */
export function pullMessageProcessors(ctx: BrokerContext): ProcessorTable {
  const processor = (req: RemotingCommand, rc: RequestContext) => {
    const pull = readPullHeader(req, rc.channel.remoteAddress);
    return new Promise<RemotingCommand | null>((resolve, reject) => {
      const rerun = () => execute(ctx, pull, false).then((r) => resolve('park' in r ? null : r), reject);
      execute(ctx, pull, true).then((res) => {
        if (!('park' in res)) {
          resolve(res);
          return;
        }
        const timeoutMs = ctx.config.longPollingEnable ? pull.suspendTimeoutMillis : ctx.config.shortPollingTimeMills;
        const parked = ctx.pullRequestHoldService.hold(pull.topic, pull.queueId, pull.queueOffset, timeoutMs, () => {
          if (rc.channel.isClosed) {
            resolve(null);
            return;
          }
          rerun();
        }, arrivalFilter(res.park.sql));
        if (!parked) rerun();
      }, reject);
    });
  };
  return [
    [RequestCode.PULL_MESSAGE, processor],
    [RequestCode.LITE_PULL_MESSAGE, processor],
  ];
}

async function execute(ctx: BrokerContext, pull: PullRequest, firstAttempt: boolean): Promise<Answer> {
  const outcome = await pullMessage(ctx, pull, firstAttempt);
  if (isRefusal(outcome)) return createResponse(outcome.code, outcome.remark);
  const { result } = outcome;
  const { code, suggestWhichBrokerId } = pullAnswer(ctx.config, pull, outcome);
  if (code === ResponseCode.PULL_NOT_FOUND && firstAttempt && (pull.sysFlag & FLAG_SUSPEND)) return { park: outcome };
  const res = createResponse(code, remarkFor(result), {
    suggestWhichBrokerId: String(suggestWhichBrokerId),
    nextBeginOffset: String(result.nextBeginOffset),
    minOffset: String(result.minOffset),
    maxOffset: String(result.maxOffset),
  });
  if (code === ResponseCode.SUCCESS) {
    res.bodyParts = result.records;
    ctx.stats.msgGetTotal += result.records.length;
    if (ctx.stats.metrics) {
      let bytes = 0;
      for (const r of result.records) bytes += r.length;
      ctx.stats.metrics.messagesPulled(pull.topic, pull.consumerGroup, result.records.length, bytes);
    }
  }
  return res;
}

function remarkFor(result: GetResult): string | undefined {
  return result.status === 'FOUND' ? undefined : result.status;
}
