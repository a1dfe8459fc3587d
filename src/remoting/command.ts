import { SERVER_VERSION } from '../common/version.js';
import { JAVA_INT_RANGE, JAVA_LONG_RANGE, parseJavaInt, parseJavaLong } from './java-number.js';

/** Bit 0 of `flag`: this command is a response. */
export const FLAG_RESPONSE = 1;
/** Bit 1 of `flag`: one-way request, never answered. */
export const FLAG_ONEWAY = 2;

export const SERIALIZE_JSON = 0;
export const SERIALIZE_ROCKETMQ = 1;

/** One remoting frame, decoded (Java: RemotingCommand). extFields values are always strings. */
export interface RemotingCommand {
  code: number;
  language: string;
  version: number;
  opaque: number;
  flag: number;
  remark?: string;
  extFields: Record<string, string>;
  body?: Buffer;
  /** Responses only: a body given as several buffers (pull records), written without concatenation. */
  bodyParts?: Buffer[];
  /**
   * Requests only: a large body received in several socket chunks, as views of them; `body` is then unset. Only
   * processors that asked for it (RequestDispatcher.keepBodyParts) see it; for all others it is joined into `body`.
   */
  receivedBodyParts?: Buffer[];
  /** Requests only: parked by long polling before its answer (Java isSuspended; the metrics' is_long_polling). */
  suspended?: boolean;
  /** Responses only: called once, after the frame went to the socket or was dropped (its buffers are then free). */
  onWritten?: () => void;
}

/** Makes `body` of a request received in pieces one buffer (for readers that need it whole). */
export function joinReceivedBody(cmd: RemotingCommand): void {
  const parts = cmd.receivedBodyParts;
  if (parts === undefined) return;
  cmd.body = Buffer.concat(parts);
  cmd.receivedBodyParts = undefined;
}

export function isResponse(cmd: RemotingCommand): boolean {
  return (cmd.flag & FLAG_RESPONSE) !== 0;
}

export function isOneway(cmd: RemotingCommand): boolean {
  return (cmd.flag & FLAG_ONEWAY) !== 0;
}

let nextOpaque = 0;
/** Opaque for requests this process originates (broker→client, broker→namesrv). */
export function newOpaque(): number {
  nextOpaque = (nextOpaque + 1) & 0x7fffffff;
  return nextOpaque;
}

export function createRequest(code: number, extFields: Record<string, string> = {}, body?: Buffer): RemotingCommand {
  return { code, language: 'JAVA', version: SERVER_VERSION, opaque: newOpaque(), flag: 0, extFields, body };
}

export function createResponse(
  code: number,
  remark?: string,
  extFields: Record<string, string> = {},
  body?: Buffer,
): RemotingCommand {
  return { code, language: 'JAVA', version: SERVER_VERSION, opaque: 0, flag: FLAG_RESPONSE, remark, extFields, body };
}

/**
 * Header field reader for processors: Java's decodeCommandCustomHeader turns strings into typed fields.
 * Missing required fields and numbers Java's Integer.parseInt / Long.parseLong would refuse become a HeaderError,
 * which the dispatcher maps to SYSTEM_ERROR (what Java answers for the RemotingCommandException or
 * NumberFormatException) with a remark naming the field.
 */
export class HeaderError extends Error {}

export class HeaderReader {
  constructor(private readonly fields: Record<string, string>) {}

  str(name: string): string {
    return headerStr(name, this.fields[name]);
  }
  optStr(name: string): string | undefined {
    return this.fields[name];
  }
  /** A Java int field (Integer.parseInt). */
  int(name: string): number {
    return headerInt(name, this.fields[name]);
  }
  /** An optional Java Integer field; absent or empty (Java 4.9.4+ reads empty binary-header values as null) → dflt. */
  optInt(name: string, dflt?: number): number | undefined {
    return headerOptInt(name, this.fields[name], dflt);
  }
  /**
   * A Java long field (Long.parseLong). Values beyond ±(2^53 − 1) come back rounded; fine for bounds (mqadmin's
   * Long.MAX_VALUE end time), and the store refuses to write any int64 it cannot hold exactly.
   */
  long(name: string): number {
    return headerLong(name, this.fields[name]);
  }
  optLong(name: string, dflt?: number): number | undefined {
    return headerOptLong(name, this.fields[name], dflt);
  }
  /** Java Boolean.parseBoolean: "true" in any case is true, anything else false. */
  bool(name: string, dflt = false): boolean {
    return headerBool(this.fields[name], dflt);
  }
}

// HeaderReader's reads for a value the caller looked up itself (`name` is the field's name, for the error): a hot
// processor reads its fields with plain property accesses, which a shared reader's keyed lookups are not.

export function headerStr(name: string, v: string | undefined): string {
  if (v === undefined) throw new HeaderError(`the custom field <${name}> is null`);
  return v;
}

export function headerInt(name: string, v: string | undefined): number {
  const s = headerStr(name, v);
  const n = parseJavaInt(s);
  if (n === undefined) throw new HeaderError(notANumber(name, s, JAVA_INT_RANGE));
  return n;
}

export function headerOptInt(name: string, v: string | undefined, dflt?: number): number | undefined {
  if (v === undefined || v === '') return dflt;
  return headerInt(name, v);
}

export function headerLong(name: string, v: string | undefined): number {
  const s = headerStr(name, v);
  const n = parseJavaLong(s);
  if (n === undefined) throw new HeaderError(notANumber(name, s, JAVA_LONG_RANGE));
  return n;
}

export function headerOptLong(name: string, v: string | undefined, dflt?: number): number | undefined {
  if (v === undefined || v === '') return dflt;
  return headerLong(name, v);
}

export function headerBool(v: string | undefined, dflt = false): boolean {
  if (v === undefined) return dflt;
  return v.length === 4 && v.toLowerCase() === 'true';
}

/** Java's remark would be `java.lang.NumberFormatException: For input string: "1e3", ...`; ours names the field. */
function notANumber(name: string, value: string, type: string): string {
  const shown = value.length > 40 ? `${value.slice(0, 40)}… (${value.length} characters)` : value;
  return `the custom field <${name}> is not ${type}: ${JSON.stringify(shown)}`;
}
