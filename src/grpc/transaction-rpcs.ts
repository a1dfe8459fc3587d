// EndTransaction (Java proxy grpc/v2/transaction/EndTransactionActivity + processor/TransactionProcessor): the
// client names a transaction by its id (the half message's UNIQ_KEY); the broker's END_TRANSACTION needs the half
// message's commit-log and queue offsets. The proxy keeps them 30 s from the send or the last check-back; inside the
// broker we keep them longer and fall back to the key index, so a commit after a restart still finds its message.
import { MessageConst } from '../common/message-properties.js';
import { RequestCode } from '../common/request-code.js';
import { ResponseCode } from '../common/response-code.js';
import { createRequest } from '../remoting/command.js';
import { HALF_TOPIC, TransactionType } from '../broker/transaction/transactional-message-util.js';
import { decodeRecord, getProperty } from '../store/index.js';
import type { GrpcClientChannel } from './client-channel.js';
import type { GrpcServices, UnaryHandler } from './services.js';
import { GrpcStatusError, OK } from './status.js';
import { validateTopic } from './validators.js';

interface HalfLocation {
  commitLogOffset: number;
  queueOffset: number;
  atMs: number;
}

/** Transactions remembered at once; the oldest go first (the key index still finds them). */
const MAX_REMEMBERED = 100_000;
/** Kept this long after the send or check-back (the proxy keeps 30 s; a check-back renews it). */
const REMEMBER_MS = 24 * 3600 * 1000;

export class TransactionIndex {
  private readonly byKey = new Map<string, HalfLocation>();

  constructor(private readonly s: Pick<GrpcServices, 'ctx'>) {}

  remember(producerGroup: string, transactionId: string, commitLogOffset: number, queueOffset: number): void {
    const key = `${producerGroup}\u0001${transactionId}`;
    this.byKey.delete(key);
    this.byKey.set(key, { commitLogOffset, queueOffset, atMs: Date.now() });
    if (this.byKey.size > MAX_REMEMBERED) this.byKey.delete(this.byKey.keys().next().value as string);
  }

  async find(producerGroup: string, transactionId: string): Promise<HalfLocation | undefined> {
    const hit = this.byKey.get(`${producerGroup}\u0001${transactionId}`);
    if (hit && Date.now() - hit.atMs < REMEMBER_MS) return hit;
    // The half message is indexed by its UNIQ_KEY under the half topic.
    // Each check-back renews the half message under a new offset: the newest copy is the one to end.
    const found = await this.s.ctx.store.queryMessage(HALF_TOPIC, transactionId, 32, 0, Number.MAX_SAFE_INTEGER);
    const records = found.records.map((raw) => decodeRecord(raw)).sort((a, b) => b.commitLogOffset - a.commitLogOffset);
    for (const rec of records) {
      if (getProperty(rec.propertiesString, MessageConst.UNIQ_CLIENT_MESSAGE_ID_KEYIDX) !== transactionId) continue;
      if (getProperty(rec.propertiesString, MessageConst.PRODUCER_GROUP) !== producerGroup) continue;
      return { commitLogOffset: rec.commitLogOffset, queueOffset: rec.queueOffset, atMs: Date.now() };
    }
    return undefined;
  }

  /** A check-back going to a gRPC producer names the renewed half message its EndTransaction must end. */
  watch(channel: GrpcClientChannel): void {
    channel.onCheckBack = (group, transactionId, commitLogOffset, queueOffset) => this.remember(group, transactionId, commitLogOffset, queueOffset);
  }
}

export function endTransaction(s: GrpcServices, tx: TransactionIndex): UnaryHandler {
  return async (req, cc) => {
    const topic = validateTopic(req.topic);
    const transactionId = String(req.transaction_id ?? '');
    if (transactionId.trim() === '') throw new GrpcStatusError('INVALID_TRANSACTION_ID', 'transaction id cannot be empty');
    const resolution = req.resolution === 'COMMIT' ? TransactionType.COMMIT : req.resolution === 'ROLLBACK' ? TransactionType.ROLLBACK : TransactionType.NOT;
    const half = await tx.find(topic, transactionId);
    if (!half) throw new GrpcStatusError('INTERNAL_SERVER_ERROR', 'cannot found transaction data');
    const cmd = createRequest(RequestCode.END_TRANSACTION, {
      producerGroup: topic,
      tranStateTableOffset: String(half.queueOffset),
      commitLogOffset: String(half.commitLogOffset),
      commitOrRollback: String(resolution),
      fromTransactionCheck: String(req.source === 'SOURCE_SERVER_CHECK'),
      msgId: String(req.message_id ?? ''),
      transactionId,
    });
    const channel = s.clients.channelFor(cc);
    // The proxy sends END_TRANSACTION oneway and answers OK at once; a failed commit is retried by check-back.
    const res = await s.dispatcher.dispatch(cmd, { channel });
    if (res && res.code !== ResponseCode.SUCCESS) {
      s.logger.warn({ topic, transactionId, code: res.code, remark: res.remark }, 'gRPC end transaction refused by the broker');
    }
    return { status: OK };
  };
}
