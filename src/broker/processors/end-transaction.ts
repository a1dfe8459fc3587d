import { limited } from '../../common/log-limiter.js';
import { MessageConst, getProperty } from '../../common/message-properties.js';
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { HeaderReader, type RemotingCommand, createResponse, isOneway } from '../../remoting/command.js';
import type { ProcessorTable, RequestContext } from '../../remoting/dispatcher.js';
import type { DecodedRecord, PutStatus } from '../../store/index.js';
import type { BrokerContext } from '../context.js';
import { HALF_TOPIC, TransactionType, finalMessageFromHalf, transactionKey } from '../transaction/transactional-message-util.js';
import { putResultToResponse } from './put-status.js';

/** Put outcomes that still mean "stored" (Java EndTransactionProcessor.sendFinalMessage). */
const STORED: ReadonlySet<PutStatus> = new Set<PutStatus>(['PUT_OK', 'FLUSH_DISK_TIMEOUT', 'FLUSH_SLAVE_TIMEOUT', 'SLAVE_NOT_AVAILABLE']);

interface EndTransactionHeader {
  producerGroup: string;
  tranStateTableOffset: number;
  commitLogOffset: number;
  commitOrRollback: number;
  fromTransactionCheck: boolean;
  msgId: string;
  transactionId?: string;
}

/**
 * END_TRANSACTION (37), usually oneway (Java EndTransactionProcessor): COMMIT stores the half message under its
 * real topic/queue and writes an op message; ROLLBACK writes only the op message; type 0 (unknown) is left to the
 * check-back. A oneway request gets no response; a two-way one always gets one.
 */
export function endTransactionProcessors(ctx: BrokerContext): ProcessorTable {
  return [
    [RequestCode.END_TRANSACTION, async (req, rc) => {
      const res = await endTransaction(ctx, req, rc);
      return isOneway(req) ? null : res;
    }],
  ];
}

function readHeader(req: RemotingCommand): EndTransactionHeader {
  const h = new HeaderReader(req.extFields);
  return {
    producerGroup: h.str('producerGroup'),
    tranStateTableOffset: h.long('tranStateTableOffset'),
    commitLogOffset: h.long('commitLogOffset'),
    commitOrRollback: h.int('commitOrRollback'),
    fromTransactionCheck: h.bool('fromTransactionCheck'),
    msgId: h.str('msgId'),
    transactionId: h.optStr('transactionId'),
  };
}

async function endTransaction(ctx: BrokerContext, req: RemotingCommand, rc: RequestContext): Promise<RemotingCommand> {
  const header = readHeader(req);
  const log = ctx.logger;
  const type = header.commitOrRollback;
  if (type !== TransactionType.NOT && type !== TransactionType.COMMIT && type !== TransactionType.ROLLBACK) {
    return createResponse(ResponseCode.SYSTEM_ERROR, `commitOrRollback field wrong: ${type}`);
  }
  const fields = { peer: rc.channel.remoteAddress, group: header.producerGroup, msgId: header.msgId, fromCheck: header.fromTransactionCheck };
  if (type === TransactionType.NOT) {
    // Java answers nothing at all; a two-way caller still deserves a response.
    limited(log).warn('end-transaction-unknown', { ...fields, remark: req.remark }, 'end transaction with unknown state; waiting for the check-back');
    return createResponse(ResponseCode.SUCCESS);
  }
  if (type === TransactionType.ROLLBACK || header.fromTransactionCheck) {
    log.info({ ...fields, type: type === TransactionType.COMMIT ? 'COMMIT' : 'ROLLBACK' }, 'end transaction');
  }

  const tx = ctx.transactionalMessageService;
  await tx.ready();
  const half = await tx.lookHalfMessage(header.commitLogOffset);
  const refused = checkPrepareMessage(half, header);
  if (refused) return refused;
  const prepared = half as DecodedRecord;
  if (rejectCommitOrRollback(ctx, header, prepared)) {
    return createResponse(
      ResponseCode.ILLEGAL_OPERATION,
      `end transaction refused: CHECK_IMMUNITY_TIME_IN_SECONDS has passed for msgId ${header.msgId}; waiting for the check-back`,
    );
  }

  const key = transactionKey(prepared);
  if (tx.isFinished(prepared, key) || !tx.tryBeginEnd(key)) {
    // Already committed or rolled back (maybe through another check-back copy): never deliver twice.
    log.info({ ...fields, halfOffset: prepared.queueOffset }, 'end transaction for a finished transaction ignored');
    if (!tx.hasOpFor(prepared)) await tx.deletePrepareMessage(prepared);
    return createResponse(ResponseCode.SUCCESS);
  }
  try {
    if (type === TransactionType.COMMIT) {
      const msg = finalMessageFromHalf(prepared);
      if (typeof msg === 'string') return createResponse(ResponseCode.SYSTEM_ERROR, msg);
      // The committed message goes through the same timer / delay-level hooks as a plain send (Java HookUtils).
      const refused = ctx.timerMessageService?.applyTimer(msg);
      if (refused) return createResponse(refused.code, refused.remark);
      const result = await ctx.store.putMessage(ctx.scheduleMessageService.applyDelay(msg));
      if (!STORED.has(result.status)) return putResultToResponse(result, ctx.config.haSemantics);
      ctx.stats.msgPutTotal += result.messageCount;
    }
    await tx.deletePrepareMessage(prepared);
    const realTopic = getProperty(prepared.propertiesString, MessageConst.REAL_TOPIC) ?? prepared.topic;
    ctx.stats.metrics?.transactionFinished(realTopic, type === TransactionType.COMMIT ? 'commit' : 'rollback', prepared.bornTimestamp);
    return createResponse(ResponseCode.SUCCESS);
  } finally {
    tx.endDone(key);
  }
}

/** Java checkPrepareMessage: the record must be the half message the producer names. */
function checkPrepareMessage(half: DecodedRecord | undefined, header: EndTransactionHeader): RemotingCommand | undefined {
  if (!half || half.topic !== HALF_TOPIC) {
    return createResponse(
      ResponseCode.SYSTEM_ERROR,
      `Find prepared transaction message failed: no half message at commitLogOffset ${header.commitLogOffset}`,
    );
  }
  const pgroup = getProperty(half.propertiesString, MessageConst.PRODUCER_GROUP);
  if (pgroup !== header.producerGroup) {
    return createResponse(ResponseCode.SYSTEM_ERROR, `The producer group wrong: the half message belongs to ${pgroup ?? '(none)'}`);
  }
  if (half.queueOffset !== header.tranStateTableOffset) {
    return createResponse(
      ResponseCode.SYSTEM_ERROR,
      `The transaction state table offset wrong: ${header.tranStateTableOffset}, the half message is at queue offset ${half.queueOffset}`,
    );
  }
  if (half.commitLogOffset !== header.commitLogOffset) {
    return createResponse(ResponseCode.SYSTEM_ERROR, `The commit log offset wrong: ${header.commitLogOffset}`);
  }
  return undefined;
}

/**
 * 5.x rejectCommitOrRollback: with CHECK_IMMUNITY_TIME_IN_SECONDS set, the producer's own END (not a check answer)
 * is refused once that time (at least transactionTimeOut) has passed; the check-back decides instead.
 */
function rejectCommitOrRollback(ctx: BrokerContext, header: EndTransactionHeader, half: DecodedRecord): boolean {
  if (header.fromTransactionCheck) return false;
  const raw = getProperty(half.propertiesString, MessageConst.CHECK_IMMUNITY_TIME_IN_SECONDS);
  if (!raw) return false;
  const timeout = ctx.config.transactionTimeOut;
  const seconds = /^-?\d+$/.test(raw.trim()) ? Number(raw.trim()) : 0;
  const immunityMs = Math.max(seconds * 1000, timeout);
  return Date.now() - half.bornTimestamp > immunityMs;
}
