// Request dispatch apart from any transport: the code → processor table, the hook chain around it (Java RPCHook:
// ACL, metrics) and the mapping of thrown errors to responses. A TCP connection (RemotingServer) and, later, a gRPC
// stream hand requests in through the same dispatcher, each as a ClientChannel.
import type { Logger } from 'pino';
import { ResponseCode } from '../common/response-code.js';
import { limited } from '../common/log-limiter.js';
import { HeaderError, type RemotingCommand, createResponse, joinReceivedBody } from './command.js';

/**
 * A client as the layers above see it, whatever carries it (Java: Channel as held by ClientChannelInfo). Broker →
 * client calls (consumer-ids-changed, transaction check-back, reply, consumer-running-info relay) go through it.
 */
export interface ClientChannel {
  /** Unique per process, for logs and tables. */
  readonly id: number;
  /** `ip:port` of the peer. */
  readonly remoteAddress: string;
  readonly isClosed: boolean;
  /** Free-form per-channel state for the layers above (client id, etc.). */
  readonly attributes: Map<string, unknown>;
  onClose(listener: (channel: ClientChannel) => void): void;
  /** Sends a oneway command; false when the channel is closed or cannot take it. */
  sendOneway(cmd: RemotingCommand): boolean;
  /** Sends a request and waits for the client's answer. */
  request(cmd: RemotingCommand, timeoutMs: number): Promise<RemotingCommand>;
  close(): void;
  /**
   * Whether answers can go out without piling up in memory (Netty Channel.isWritable); a channel without flow
   * control leaves it out (always writable).
   */
  readonly writable?: boolean;
  /**
   * Runs `task` once the channel can take an answer, or once it closed (pulls wait here rather than pile up as
   * buffered answers). The task calls `done` when its answer is handed over; until then it reserves room.
   */
  whenWritable?(task: (done: () => void) => void): void;
}

/** What a processor sees of the request's origin. It never touches the transport directly. */
export interface RequestContext {
  channel: ClientChannel;
}

/**
 * Handles one request family. Returns the response (opaque and flag are filled in by the transport), or null for
 * no response (oneway requests). A long poll simply returns a promise that settles later.
 */
export type Processor = (req: RemotingCommand, ctx: RequestContext) => RemotingCommand | null | Promise<RemotingCommand | null>;

/** A request family: request code → processor. */
export type ProcessorTable = ReadonlyArray<readonly [code: number, processor: Processor]>;

/** Builds one table from several codes served by the same processor. */
export function sameProcessor(codes: readonly number[], processor: Processor): ProcessorTable {
  return codes.map((c) => [c, processor] as const);
}

/**
 * Runs around every request (Java RPCHook doBeforeRequest / doAfterResponse). `before` may answer the request
 * itself (an ACL denial): the processor is then skipped and `after` still runs. Hooks must not throw; one that does
 * is logged and ignored.
 */
export interface RequestHook {
  before?(req: RemotingCommand, ctx: RequestContext): RemotingCommand | undefined;
  after?(req: RemotingCommand, res: RemotingCommand | null, ctx: RequestContext): void;
}

export type DispatchResult = RemotingCommand | null | Promise<RemotingCommand | null>;

export class RequestDispatcher {
  private readonly processors = new Map<number, Processor>();
  private readonly hooks: RequestHook[] = [];
  /** Codes whose processor takes a body received in pieces (receivedBodyParts) as it is. */
  private readonly partsCodes = new Set<number>();
  private errorSeq = 0;

  constructor(private readonly logger: Logger) {}

  register(code: number, processor: Processor): void {
    this.processors.set(code, processor);
  }

  registerTable(table: ProcessorTable): void {
    for (const [code, processor] of table) this.register(code, processor);
  }

  /** The processors of these codes read receivedBodyParts themselves (others always get one joined `body`). */
  keepBodyParts(codes: readonly number[]): void {
    for (const c of codes) this.partsCodes.add(c);
  }

  addHook(hook: RequestHook): void {
    this.hooks.push(hook);
  }

  /** Whether a code has a processor. */
  serves(code: number): boolean {
    return this.processors.has(code);
  }

  /** Runs the request through the hooks and its processor. Never throws; a failure becomes a SYSTEM_ERROR answer. */
  dispatch(req: RemotingCommand, ctx: RequestContext): DispatchResult {
    // hooks (ACL signatures) and most processors read `body` whole
    if (req.receivedBodyParts !== undefined && (this.hooks.length > 0 || !this.partsCodes.has(req.code))) joinReceivedBody(req);
    if (this.hooks.length > 0) return this.dispatchHooked(req, ctx);
    return this.invoke(req, ctx);
  }

  private invoke(req: RemotingCommand, ctx: RequestContext): DispatchResult {
    const processor = this.processors.get(req.code);
    if (!processor) return createResponse(ResponseCode.REQUEST_CODE_NOT_SUPPORTED, ` request type ${req.code} not supported`);
    let result: DispatchResult;
    try {
      result = processor(req, ctx);
    } catch (err) {
      return this.errorResponse(req, err);
    }
    if (result instanceof Promise) return result.then(capRemark, (err: unknown) => this.errorResponse(req, err));
    return capRemark(result);
  }

  private dispatchHooked(req: RemotingCommand, ctx: RequestContext): DispatchResult {
    for (const hook of this.hooks) {
      let early: RemotingCommand | undefined;
      try {
        early = hook.before?.(req, ctx);
      } catch (err) {
        this.logger.error({ err, code: req.code }, 'request hook failed (before)');
      }
      if (early) {
        capRemark(early);
        this.runAfter(req, early, ctx);
        return early;
      }
    }
    const result = this.invoke(req, ctx);
    if (result instanceof Promise) {
      return result.then((res) => {
        this.runAfter(req, res, ctx);
        return res;
      });
    }
    this.runAfter(req, result, ctx);
    return result;
  }

  private runAfter(req: RemotingCommand, res: RemotingCommand | null, ctx: RequestContext): void {
    for (const hook of this.hooks) {
      try {
        hook.after?.(req, res, ctx);
      } catch (err) {
        this.logger.error({ err, code: req.code }, 'request hook failed (after)');
      }
    }
  }

  /**
   * A thrown error as an answer: a HeaderError names the field (our own words); anything else is a bug or an
   * environment failure whose text (a JS message, a file path) stays in the log: the remark says where to look.
   */
  private errorResponse(req: RemotingCommand, err: unknown): RemotingCommand {
    if (err instanceof HeaderError) {
      return capRemark(createResponse(ResponseCode.SYSTEM_ERROR, `request code ${req.code}: ${err.message}`));
    }
    const errorId = ++this.errorSeq;
    limited(this.logger).error(`processor-failed-${req.code}`, { err, code: req.code, errorId }, 'processor failed');
    return createResponse(ResponseCode.SYSTEM_ERROR,
      `internal error handling request code ${req.code}; the broker logged it as errorId ${errorId}`);
  }
}

/** Longest remark sent (ours; Java has no cap): enough for any name-bearing remark, not for a name echoed at length. */
export const MAX_REMARK_CHARS = 1024;

/** Cuts a remark over MAX_REMARK_CHARS, saying how much was cut. Returns its argument. */
export function capRemark<T extends RemotingCommand | null>(res: T): T {
  const remark = res?.remark;
  if (remark !== undefined && remark !== null && remark.length > MAX_REMARK_CHARS) {
    res!.remark = `${remark.slice(0, MAX_REMARK_CHARS - 40)}… (${remark.length - (MAX_REMARK_CHARS - 40)} more characters)`;
  }
  return res;
}
