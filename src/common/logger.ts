import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';

export type { Logger };

export interface LoggerOptions {
  /** Human-readable lines instead of JSON (the CLI's --pretty, or a terminal on stderr). */
  pretty?: boolean;
}

/** Logs go to stderr so that stdout carries only the one "ready" line and CLI output. */
export function createLogger(level = process.env.RMQ_LOG_LEVEL ?? 'info', options: LoggerOptions = {}): Logger {
  if (options.pretty) return pino({ level, base: undefined }, prettyStream(process.stderr));
  return pino({ level, base: undefined }, pino.destination(2));
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
