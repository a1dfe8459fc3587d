// DLedger RPC transport (D/DLedgerRpcNettyService, protocol/dledger.md §1.1–§1.2): a remoting server on the port of
// this member's own dLegerPeers entry and a remoting client with one connection per peer. Requests carry the
// fastjson body of the request class and no extFields; replies carry header code 200 whatever the outcome, the
// real code being inside the JSON body. Undecodable frames close that connection only (the frame decoder throws);
// unknown codes answer REQUEST_CODE_NOT_SUPPORTED (3) and handler failures SYSTEM_ERROR (1), both without a body.
import net from 'node:net';
import type { Logger } from 'pino';
import { ResponseCode } from '../../common/response-code.js';
import { RemotingClient } from '../../remoting/client.js';
import { type RemotingCommand, createRequest, createResponse } from '../../remoting/command.js';
import { type ClientChannel, type RequestContext, RequestDispatcher } from '../../remoting/dispatcher.js';
import { RemotingServer } from '../../remoting/server.js';
import { DLEDGER_RPC_TIMEOUT_MS, DLedgerResponseCode } from './codes.js';
import { DLedgerBodyError } from './json.js';

/**
 * Handles one request body; resolves the reply body, or null to answer nothing (the official follower leaves
 * some pushes unanswered, §3.5). Throwing DLedgerBodyError (or anything) answers SYSTEM_ERROR without a body.
 */
export type PeerHandler = (body: Buffer | undefined, channel: ClientChannel) => Buffer | null | Promise<Buffer | null>;

/** Splits "host:port" (the part after `id-` in dLegerPeers). */
export function splitAddress(addr: string): { host: string; port: number } {
  const i = addr.lastIndexOf(':');
  const port = Number(addr.slice(i + 1));
  if (i <= 0 || !Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`bad peer address ${addr}`);
  return { host: addr.slice(0, i), port };
}

/**
 * Parses `n0-host:port;n1-host:port` (D/MemberState constructor: the id is the text before the first '-', the
 * address the rest). Empty items are skipped; a repeated id keeps the last address, like the Java HashMap.
 */
export function parsePeers(peers: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const item of peers.split(';')) {
    const s = item.trim();
    if (s === '') continue;
    const dash = s.indexOf('-');
    if (dash <= 0 || dash === s.length - 1) throw new Error(`dLegerPeers item "${s}" is not id-host:port`);
    const id = s.slice(0, dash);
    const addr = s.slice(dash + 1);
    splitAddress(addr);
    out.set(id, addr);
  }
  return out;
}

export class PeerRpcServer {
  private readonly dispatcher: RequestDispatcher;
  private readonly server: RemotingServer;

  constructor(private readonly logger: Logger) {
    this.dispatcher = new RequestDispatcher(logger);
    this.server = new RemotingServer(logger, this.dispatcher);
  }

  /** Registers the handler of one request code. */
  handle(code: number, handler: PeerHandler): void {
    this.dispatcher.register(code, (req, ctx) => this.run(code, handler, req, ctx));
  }

  private run(code: number, handler: PeerHandler, req: RemotingCommand, ctx: RequestContext): RemotingCommand | null | Promise<RemotingCommand | null> {
    let out: Buffer | null | Promise<Buffer | null>;
    try {
      out = handler(req.body, ctx.channel);
    } catch (err) {
      return this.failure(code, err);
    }
    if (out instanceof Promise) return out.then((b) => reply(b), (err: unknown) => this.failure(code, err));
    return reply(out);
  }

  /** A handler failure: remoting SYSTEM_ERROR with a remark and no body (what the Java remoting layer answers). */
  private failure(code: number, err: unknown): RemotingCommand {
    if (!(err instanceof DLedgerBodyError)) this.logger.warn({ err, code }, 'dledger request failed');
    const text = err instanceof Error ? err.message : String(err);
    return createResponse(ResponseCode.SYSTEM_ERROR, `dledger request code ${code}: ${text}`);
  }

  /** Binds `port` on 0.0.0.0 (the official node binds all interfaces, ignoring the broker's bindAddress). */
  listen(port: number, host = '0.0.0.0'): Promise<number> {
    return this.server.listen(port, host);
  }

  get port(): number {
    return this.server.port;
  }

  close(): Promise<void> {
    return this.server.close();
  }
}

function reply(body: Buffer | null): RemotingCommand | null {
  if (body === null) return null;
  // D/DLedgerRpcNettyService.handleResponse: header code is DLedgerResponseCode.SUCCESS (200), not remoting 0.
  return createResponse(DLedgerResponseCode.SUCCESS, undefined, {}, body);
}

/** Outgoing calls: one connection per peer address, 3000 ms for the whole call (connect included). */
export class PeerRpcClient {
  private readonly client: RemotingClient;
  private closed = false;

  constructor(private readonly logger: Logger) {
    this.client = new RemotingClient(logger, DLEDGER_RPC_TIMEOUT_MS);
  }

  /**
   * Sends a request and resolves the reply body; null when there is no usable answer (connect failure, timeout,
   * closed connection, a remoting error without a body) — the callers treat that as the Java "no response" case.
   */
  async call(addr: string, code: number, body: Buffer, timeoutMs = DLEDGER_RPC_TIMEOUT_MS): Promise<Buffer | null> {
    if (this.closed) return null;
    const started = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), timeoutMs);
    });
    try {
      const res = await Promise.race([
        this.client.request(addr, createRequest(code, {}, body), Math.max(1, timeoutMs - (Date.now() - started))),
        deadline,
      ]);
      if (!res || !res.body || res.body.length === 0) return null;
      return res.body;
    } catch (err) {
      this.logger.debug({ addr, code, err: (err as Error).message }, 'dledger call failed');
      return null;
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.client.close();
  }
}

/**
 * Whether a fresh TCP connection to `addr` is refused (ECONNREFUSED or reset) within `timeoutMs`. A connection that
 * opens, or no answer in time, counts as not refused. Used by the fast-failover extension (pitfall 21).
 */
export function connectionRefused(addr: string, timeoutMs: number): Promise<boolean> {
  const { host, port } = splitAddress(addr);
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (refused: boolean): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(refused);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.once('connect', () => done(false));
    socket.once('error', (err: NodeJS.ErrnoException) => done(err.code === 'ECONNREFUSED' || err.code === 'ECONNRESET'));
  });
}
