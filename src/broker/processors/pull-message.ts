import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { HeaderReader, type RemotingCommand, createResponse } from '../../remoting/command.js';
import type { ClientChannel, ProcessorTable, RequestContext } from '../../remoting/dispatcher.js';
import type { GetResult } from '../../store/index.js';
import type { BrokerContext } from '../context.js';
import { type ColdHold, FLAG_SUSPEND, type PullRequest, type Pulled, arrivalFilter, pullAnswer, pullMessage } from '../pull/pull-service.js';
import { isRefusal } from '../outcome.js';
import { COLD_HOLD_MS } from '../coldctr/cold-data-flow-control.js';

function readPullHeader(req: RemotingCommand, channel: ClientChannel): PullRequest {
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
    peer: channel.remoteAddress,
    channel,
  };
}

function noop(): void {}

/** The answer to a pull, "park it" (nothing found, suspension allowed: long polling) or "hold it" (cold data). */
type Answer = RemotingCommand | { park: Pulled } | ColdHold;

/** Java PullMessageProcessor: PULL_MESSAGE (11) and LITE_PULL_MESSAGE (361), with long polling. */
export function pullMessageProcessors(ctx: BrokerContext): ProcessorTable {
  const processor = (req: RemotingCommand, rc: RequestContext) => {
    const pull = readPullHeader(req, rc.channel);
    const channel = rc.channel;
    return new Promise<RemotingCommand | null>((resolve, reject) => {
      // Messages are read for a pull only when its channel can take the answer: on one that does not drain, the
      // pull waits as a request (Netty isWritable; Java 5.x with enableNetWorkFlowControl drops such pulls).
      const whenWritable = (run: (done: () => void) => void) => {
        if (!channel.whenWritable) {
          run(noop);
          return;
        }
        channel.whenWritable((done) => {
          if (channel.isClosed) {
            done();
            resolve(null);
          } else {
            run(done);
          }
        });
      };
      const rerun = () => whenWritable((done) => {
        execute(ctx, pull, false).then((r) => {
          done();
          if ('coldHold' in r) holdCold();
          else resolve('park' in r ? null : r);
        }, (err) => {
          done();
          reject(err);
        });
      });
      // Java ColdDataPullRequestHoldService: the pull is run again after COLD_HOLD_MS, then served one message.
      const holdCold = () => {
        pull.coldHeld = true;
        const cold = ctx.coldData;
        if (!cold?.tryHold()) {
          rerun();
          return;
        }
        setTimeout(() => {
          cold.releaseHold();
          if (channel.isClosed) resolve(null);
          else rerun();
        }, COLD_HOLD_MS).unref();
      };
      whenWritable((done) => execute(ctx, pull, true).then((res) => {
        done();
        if ('coldHold' in res) {
          holdCold();
          return;
        }
        if (!('park' in res)) {
          resolve(res);
          return;
        }
        const timeoutMs = ctx.config.longPollingEnable ? pull.suspendTimeoutMillis : ctx.config.shortPollingTimeMills;
        const parked = ctx.pullRequestHoldService.hold(pull.topic, pull.queueId, pull.queueOffset, timeoutMs, () => {
          if (channel.isClosed) {
            resolve(null);
            return;
          }
          rerun();
        }, arrivalFilter(res.park.sql));
        if (parked) req.suspended = true;
        else rerun();
      }, (err) => {
        done();
        reject(err);
      }));
    });
  };
  return [
    [RequestCode.PULL_MESSAGE, processor],
    [RequestCode.LITE_PULL_MESSAGE, processor],
  ];
}

async function execute(ctx: BrokerContext, pull: PullRequest, firstAttempt: boolean): Promise<Answer> {
  const outcome = await pullMessage(ctx, pull, firstAttempt);
  if (isRefusal(outcome)) return createResponse(outcome.code, outcome.remark, outcome.extFields);
  if ('coldHold' in outcome) return outcome;
  const { result } = outcome;
  const { code, suggestWhichBrokerId } = pullAnswer(ctx.config, pull, outcome);
  if (code === ResponseCode.PULL_NOT_FOUND && firstAttempt && (pull.sysFlag & FLAG_SUSPEND)) return { park: outcome };
  const res = createResponse(code, remarkFor(result), {
    suggestWhichBrokerId: String(suggestWhichBrokerId),
    nextBeginOffset: String(result.nextBeginOffset),
    minOffset: String(result.minOffset),
    maxOffset: String(result.maxOffset),
  });
  const pins = result.pins;
  if (code === ResponseCode.SUCCESS) {
    res.bodyParts = result.records;
    ctx.stats.msgGetTotal += result.records.length;
    let bytes = 0;
    for (const r of result.records) bytes += r.length;
    ctx.stats.items.countGet(ctx.config.brokerClusterName, pull.topic, pull.consumerGroup, result.records.length, bytes);
    ctx.stats.metrics?.messagesPulled(pull.topic, pull.consumerGroup, result.records.length, bytes);
    // the records may be views of the store's memory: it may reuse that memory once they are on the socket
    if (pins) res.onWritten = () => pins.release();
  } else {
    pins?.release();
  }
  return res;
}

function remarkFor(result: GetResult): string | undefined {
  return result.status === 'FOUND' ? undefined : result.status;
}
