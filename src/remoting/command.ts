import { SERVER_VERSION } from '../common/version.js';

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
 * Missing required fields become a HeaderError, which the dispatcher maps to SYSTEM_ERROR with a remark
 * naming the field (as Java's RemotingCommandException does).
 */
export class HeaderError extends Error {}

export class HeaderReader {
  /** `aliases` maps a field name to the short key a compact header carries it under (SEND_MESSAGE_V2's letters). */
  constructor(
    private readonly fields: Record<string, string>,
    private readonly aliases?: Readonly<Record<string, string>>,
  ) {}

  private get(name: string): string | undefined {
    if (this.aliases) {
      const short = this.aliases[name];
      const v = short === undefined ? undefined : this.fields[short];
      if (v !== undefined) return v;
    }
    return this.fields[name];
  }

  str(name: string): string {
    const v = this.get(name);
    if (v === undefined) throw new HeaderError(`the custom field <${name}> is null`);
    return v;
  }
  optStr(name: string): string | undefined {
    return this.get(name);
  }
  int(name: string): number {
    return this.parseNumber(name, this.str(name));
  }
  optInt(name: string, dflt?: number): number | undefined {
    const v = this.get(name);
    if (v === undefined || v === '') return dflt;
    return this.parseNumber(name, v);
  }
  long(name: string): number {
    return this.parseNumber(name, this.str(name));
  }
  optLong(name: string, dflt?: number): number | undefined {
    return this.optInt(name, dflt);
  }
  bool(name: string, dflt = false): boolean {
    const v = this.get(name);
    if (v === undefined) return dflt;
    return v.toLowerCase() === 'true';
  }
  private parseNumber(name: string, v: string): number {
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n) || !Number.isInteger(n)) {
      throw new HeaderError(`the custom field <${name}> is not a number: ${v.slice(0, 64)}`);
    }
    return n;
  }
}
