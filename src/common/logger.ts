import pino, { type Logger } from 'pino';

export type { Logger };

/** Logs go to stderr so that stdout carries only the one "ready" line and CLI output. */
export function createLogger(level = process.env.RMQ_LOG_LEVEL ?? 'info'): Logger {
  return pino({ level, base: undefined }, pino.destination(2));
}

export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
