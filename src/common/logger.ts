import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';

export type { Logger };

export interface LoggerOptions {
  /** Human-readable lines instead of JSON (the CLI's --pretty, or a terminal on stderr). */
  pretty?: boolean;
}

/**
 * The longest string a log line carries per field: names and keys come from clients, and a 70,000-character broker
 * name registered a thousand times a minute made 140 KB lines (fuzz run: 42 MB of log a minute, 21 MB of it such
 * fields). Longer ones keep their start and say their length.
 */
export const MAX_LOGGED_STRING_CHARS = 512;
/** Items of an array, or fields of an object, a line shows. */
export const MAX_LOGGED_ARRAY_ITEMS = 32;

function boundString(v: string): string {
  return v.length > MAX_LOGGED_STRING_CHARS ? `${v.slice(0, MAX_LOGGED_STRING_CHARS)}…(${v.length} chars)` : v;
}

/** A value with long strings, long arrays and wide objects cut (objects `depth` levels down); itself when nothing is. */
function boundValue(v: unknown, depth: number): unknown {
  if (typeof v === 'string') return boundString(v);
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    const n = Math.min(v.length, MAX_LOGGED_ARRAY_ITEMS);
    for (let i = 0; i < n; i++) {
      const b = boundValue(v[i], depth - 1);
      if (b !== v[i]) (out ??= v.slice(0, n))[i] = b;
    }
    if (v.length > n) (out ??= v.slice(0, n)).push(`…(${v.length} items)`);
    return out ?? v;
  }
  if (depth > 0 && v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    return boundLogFields(v as Record<string, unknown>, depth - 1);
  }
  return v;
}

/**
 * A log call's fields with long strings, long arrays and wide objects cut (plain objects and arrays two levels
 * down); the same object when nothing is long.
 */
export function boundLogFields(fields: Record<string, unknown>, depth = 2): Record<string, unknown> {
  let out = fields;
  let kept = 0;
  for (const k in fields) {
    if (++kept > MAX_LOGGED_ARRAY_ITEMS) {
      if (out === fields) out = { ...fields };
      delete out[k];
      continue;
    }
    const v = fields[k];
    const bounded = boundValue(v, depth);
    if (bounded !== v) {
      if (out === fields) out = { ...fields };
      out[k] = bounded;
    }
  }
  if (kept > MAX_LOGGED_ARRAY_ITEMS) out['…'] = `(${kept} fields)`;
  return out;
}

/** The options every logger of the server is made with. */
export function loggerOptions(level: string): pino.LoggerOptions {
  return { level, base: undefined, formatters: { log: (fields) => boundLogFields(fields) } };
}

/** Logs go to stderr so that stdout carries only the one "ready" line and CLI output. */
export function createLogger(level = process.env.RMQ_LOG_LEVEL ?? 'info', options: LoggerOptions = {}): Logger {
  if (options.pretty) return pino(loggerOptions(level), prettyStream(process.stderr));
  return pino(loggerOptions(level), pino.destination(2));
}

export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO ', 40: 'WARN ', 50: 'ERROR', 60: 'FATAL' };

/** One pino JSON line → `HH:MM:SS.mmm LEVEL [component] message key=value ...`. */
export function formatPrettyLine(json: string): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const { level, time, msg, component, err, ...rest } = o;
  const t = new Date(typeof time === 'number' ? time : Date.now());
  const hh = (n: number, w = 2) => String(n).padStart(w, '0');
  let line = `${hh(t.getHours())}:${hh(t.getMinutes())}:${hh(t.getSeconds())}.${hh(t.getMilliseconds(), 3)} ${LEVELS[level as number] ?? String(level)}`;
  if (component) line += ` [${String(component)}]`;
  line += ` ${String(msg ?? '')}`;
  for (const [k, v] of Object.entries(rest)) line += ` ${k}=${typeof v === 'string' ? (/\s/.test(v) ? JSON.stringify(v) : v) : JSON.stringify(v)}`;
  if (err && typeof err === 'object') {
    const e = err as { message?: string; stack?: string };
    line += `\n    ${(e.stack ?? e.message ?? JSON.stringify(err)).split('\n').join('\n    ')}`;
  } else if (err !== undefined) line += ` err=${JSON.stringify(err)}`;
  return line;
}

function prettyStream(out: NodeJS.WritableStream): Writable {
  let partial = '';
  return new Writable({
    write(chunk: Buffer, _enc, cb) {
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop() ?? '';
      const text = lines.filter((l) => l !== '').map(formatPrettyLine).join('\n');
      if (text) out.write(`${text}\n`);
      cb();
    },
  });
}
