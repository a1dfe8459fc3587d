// A gRPC client as the broker sees any client (Java proxy grpc/v2/channel/GrpcClientChannel): one per client id,
// writing on the client's latest Telemetry stream. Broker → client requests become Telemetry server commands:
// CHECK_TRANSACTION_STATE → recover_orphaned_transaction_command, GET_CONSUMER_RUNNING_INFO (with jstack) →
// print_thread_stack_trace_command, CONSUME_MESSAGE_DIRECTLY → verify_message_command; answers come back on the
// stream by nonce.
import crypto from 'node:crypto';
import type * as grpc from '@grpc/grpc-js';
import { stringifyFastjson } from '../common/fastjson.js';
import { MessageConst } from '../common/message-properties.js';
import { RequestCode } from '../common/request-code.js';
import { ResponseCode } from '../common/response-code.js';
import { type RemotingCommand, createResponse } from '../remoting/command.js';
import type { ClientChannel } from '../remoting/dispatcher.js';
import { decodeRecord, getProperty } from '../store/index.js';
import { recordToMessage } from './message-convert.js';

/** Channel ids of gRPC clients start here, apart from TCP connection ids (both only name channels in logs). */
let nextChannelId = 1_000_000_000;

interface PendingRelay {
  code: number;
  resolve(cmd: RemotingCommand): void;
  timer: NodeJS.Timeout;
}

export type TelemetryStream = grpc.ServerDuplexStream<Record<string, unknown>, Record<string, unknown>>;

export class GrpcClientChannel implements ClientChannel {
  readonly id = nextChannelId++;
  readonly attributes = new Map<string, unknown>();
  remoteAddress: string;
  private stream: TelemetryStream | undefined;
  private closed = false;
  private readonly closeListeners: Array<(c: ClientChannel) => void> = [];
  private readonly pending = new Map<string, PendingRelay>();
  /** Told of every check-back sent (producer group, transaction id, the half message's offsets). */
  onCheckBack?: (group: string, transactionId: string, commitLogOffset: number, queueOffset: number) => void;

  constructor(
    readonly clientId: string,
    peer: string,
  ) {
    this.remoteAddress = peer;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** The stream server commands go to from now on (a client re-opens Telemetry after errors). */
  setStream(stream: TelemetryStream, peer: string): void {
    this.stream = stream;
    this.remoteAddress = peer;
  }

  /** Forgets a stream that ended, if it is still the current one. */
  dropStream(stream: TelemetryStream): void {
    if (this.stream === stream) this.stream = undefined;
  }

  hasStream(): boolean {
    return this.stream !== undefined;
  }

  /** Writes one TelemetryCommand; false when there is no open stream. */
  writeCommand(command: Record<string, unknown>): boolean {
    const s = this.stream;
    if (this.closed || !s || s.destroyed || s.writableEnded) return false;
    try {
      s.write(command);
      return true;
    } catch {
      this.dropStream(s);
      return false;
    }
  }

  onClose(listener: (channel: ClientChannel) => void): void {
    this.closeListeners.push(listener);
  }

  sendOneway(cmd: RemotingCommand): boolean {
    switch (cmd.code) {
      case RequestCode.CHECK_TRANSACTION_STATE:
        return this.recoverOrphanedTransaction(cmd);
      case RequestCode.NOTIFY_CONSUMER_IDS_CHANGED:
        return true; // POP consumers do not rebalance
      default:
        return false;
    }
  }

  /** Java GrpcClientChannel.writeTelemetryCommand for a check-back: the half message and its transaction id. */
  private recoverOrphanedTransaction(cmd: RemotingCommand): boolean {
    if (!cmd.body) return false;
    const rec = decodeRecord(cmd.body);
    const message = recordToMessage(rec);
    const transactionId = cmd.extFields.transactionId ?? cmd.extFields.msgId ?? '';
    const group = getProperty(rec.propertiesString, MessageConst.PRODUCER_GROUP);
    if (group && transactionId) {
      this.onCheckBack?.(group, transactionId, Number(cmd.extFields.commitLogOffset), Number(cmd.extFields.tranStateTableOffset));
    }
    (message.system_properties as Record<string, unknown>).message_type = 'TRANSACTION';
    return this.writeCommand({
      recover_orphaned_transaction_command: { message, transaction_id: transactionId },
    });
  }

  request(cmd: RemotingCommand, timeoutMs: number): Promise<RemotingCommand> {
    if (cmd.code === RequestCode.GET_CONSUMER_RUNNING_INFO && cmd.extFields.jstackEnable === 'true') {
      return this.relay(cmd.code, (nonce) => ({ print_thread_stack_trace_command: { nonce } }), timeoutMs);
    }
    if (cmd.code === RequestCode.GET_CONSUMER_RUNNING_INFO) {
      // The proxy relays only jstack requests; the rest of the running info is not known for a gRPC client.
      return Promise.resolve(runningInfoResponse(''));
    }
    if (cmd.code === RequestCode.CONSUME_MESSAGE_DIRECTLY && cmd.body) {
      const message = recordToMessage(decodeRecord(cmd.body));
      return this.relay(cmd.code, (nonce) => ({ verify_message_command: { nonce, message } }), timeoutMs);
    }
    return Promise.resolve(createResponse(ResponseCode.REQUEST_CODE_NOT_SUPPORTED, `request code ${cmd.code} is not supported by a gRPC client`));
  }

  private relay(code: number, command: (nonce: string) => Record<string, unknown>, timeoutMs: number): Promise<RemotingCommand> {
    return new Promise((resolve, reject) => {
      const nonce = crypto.randomUUID();
      const timer = setTimeout(() => {
        this.pending.delete(nonce);
        reject(new Error(`request code ${code} to gRPC client ${this.clientId} timed out after ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(nonce, { code, resolve, timer });
      if (!this.writeCommand(command(nonce))) {
        clearTimeout(timer);
        this.pending.delete(nonce);
        reject(new Error(`gRPC client ${this.clientId} has no open telemetry stream`));
      }
    });
  }

  /** A thread_stack_trace or verify_message_result from the client (Java ClientActivity.report*). */
  completeRelay(nonce: string, statusCode: string, payload: { thread_stack_trace?: string }): void {
    const p = this.pending.get(nonce);
    if (!p) return;
    this.pending.delete(nonce);
    clearTimeout(p.timer);
    if (p.code === RequestCode.GET_CONSUMER_RUNNING_INFO) {
      if (statusCode === 'OK') p.resolve(runningInfoResponse(payload.thread_stack_trace ?? ''));
      else if (statusCode === 'VERIFY_FIFO_MESSAGE_UNSUPPORTED') p.resolve(createResponse(ResponseCode.NO_PERMISSION, 'forbidden to verify message'));
      else p.resolve(createResponse(ResponseCode.SYSTEM_ERROR, 'verify message failed'));
      return;
    }
    // Java ClientActivity.buildConsumeMessageDirectlyResult
    const consumeResult = statusCode === 'OK' ? 'CR_SUCCESS' : statusCode === 'FAILED_TO_CONSUME_MESSAGE' ? 'CR_LATER'
      : statusCode === 'MESSAGE_CORRUPTED' ? 'CR_RETURN_NULL' : undefined;
    const body = { autoCommit: true, consumeResult, order: false, remark: 'from gRPC client', spentTimeMills: 0 };
    p.resolve(createResponse(ResponseCode.SUCCESS, undefined, {}, Buffer.from(stringifyFastjson(body))));
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    const s = this.stream;
    this.stream = undefined;
    if (s && !s.writableEnded && !s.destroyed) {
      try {
        s.end();
      } catch {
        // already gone
      }
    }
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.resolve(createResponse(ResponseCode.SYSTEM_ERROR, `gRPC client ${this.clientId} went away`));
    }
    this.pending.clear();
    for (const l of this.closeListeners) {
      try {
        l(this);
      } catch {
        // listeners log their own failures
      }
    }
  }
}

/** ConsumerRunningInfo with only the thread stack (what the proxy relays). */
function runningInfoResponse(jstack: string): RemotingCommand {
  const info = { jstack, mqTable: {}, properties: { PROP_CONSUME_TYPE: 'CONSUME_POP' }, statusTable: {}, subscriptionSet: [] };
  return createResponse(ResponseCode.SUCCESS, undefined, {}, Buffer.from(stringifyFastjson(info)));
}
