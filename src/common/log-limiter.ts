// Repeated log lines a peer can cause (a malformed frame per connection, a bad heartbeat per request) are limited
// per kind: the first few of a window are logged as usual, the rest only counted, and when the window ends one line
// says how many were left out ("malformed frame, closing connection … and 9,412 more in the last 10 s"). 97,000 bad
// connections once wrote 15 MiB of stderr.
import type { Logger } from 'pino';

export interface LogLimit {
  /** Length of a window, ms. */
  windowMs: number;
  /** Lines of one kind logged per window before the rest are only counted. */
  burst: number;
}

export const DEFAULT_LOG_LIMIT: LogLimit = { windowMs: 10_000, burst: 5 };

type Level = 'info' | 'warn' | 'error';

interface Kind {
  windowStart: number;
  logged: number;
  suppressed: number;
  level: Level;
  msg: string;
  timer: NodeJS.Timeout | null;
}

export class RateLimitedLog {
  private readonly kinds = new Map<string, Kind>();

  constructor(
    private readonly logger: Logger,
    private readonly limit: LogLimit = DEFAULT_LOG_LIMIT,
    private readonly now: () => number = Date.now,
  ) {}

  info(kind: string, fields: object, msg: string): void {
    this.log('info', kind, fields, msg);
  }

  warn(kind: string, fields: object, msg: string): void {
    this.log('warn', kind, fields, msg);
  }

  error(kind: string, fields: object, msg: string): void {
    this.log('error', kind, fields, msg);
  }

  /** `kind` names a class of line (a fixed string, not per peer): the limit applies per kind. */
  private log(level: Level, kind: string, fields: object, msg: string): void {
    const t = this.now();
    let k = this.kinds.get(kind);
    if (k && t - k.windowStart >= this.limit.windowMs) {
      this.summarise(kind);
      k = undefined;
    }
    if (!k) {
      k = { windowStart: t, logged: 0, suppressed: 0, level, msg, timer: null };
      this.kinds.set(kind, k);
    }
    if (k.logged < this.limit.burst) {
      k.logged++;
      this.logger[level](fields, msg);
      return;
    }
    k.suppressed++;
    if (!k.timer) {
      k.timer = setTimeout(() => this.summarise(kind), Math.max(0, k.windowStart + this.limit.windowMs - t));
      k.timer.unref();
    }
  }

  /** Ends the kind's window, logging how many lines it left out. */
  private summarise(kind: string): void {
    const k = this.kinds.get(kind);
    if (!k) return;
    this.kinds.delete(kind);
    if (k.timer) clearTimeout(k.timer);
    if (k.suppressed === 0) return;
    const seconds = Math.round(this.limit.windowMs / 1000);
    this.logger[k.level]({ suppressed: k.suppressed, windowMs: this.limit.windowMs },
      `${k.msg} … and ${k.suppressed.toLocaleString('en-US')} more in the last ${seconds} s`);
  }

  /** Logs the pending summaries now (shutdown, tests). */
  flush(): void {
    for (const kind of [...this.kinds.keys()]) this.summarise(kind);
  }
}

const perLogger = new WeakMap<Logger, RateLimitedLog>();

/** The limiter shared by everything logging through `logger` (one per server, so the limit is server-wide). */
export function limited(logger: Logger): RateLimitedLog {
  let l = perLogger.get(logger);
  if (!l) {
    l = new RateLimitedLog(logger);
    perLogger.set(logger, l);
  }
  return l;
}
