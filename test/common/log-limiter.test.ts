// Repeated warnings are limited per kind, with one line counting what was left out.
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RateLimitedLog } from '../../src/common/log-limiter.js';

function capture(): { logger: pino.Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l));
      cb();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('rate-limited log', () => {
  it('logs the first lines of a window, counts the rest and says so when the window ends', async () => {
    vi.useFakeTimers();
    const { logger, lines } = capture();
    const log = new RateLimitedLog(logger, { windowMs: 10_000, burst: 3 }, () => Date.now());
    for (let i = 0; i < 9_415; i++) log.warn('malformed', { peer: `p${i}` }, 'malformed frame, closing connection');
    log.warn('other', {}, 'another kind has its own budget');
    await vi.advanceTimersByTimeAsync(0);
    expect(lines.map((l) => l.msg)).toEqual([
      'malformed frame, closing connection', 'malformed frame, closing connection', 'malformed frame, closing connection',
      'another kind has its own budget',
    ]);
    await vi.advanceTimersByTimeAsync(10_000);
    const summary = lines.at(-1)!;
    expect(summary.msg).toBe('malformed frame, closing connection … and 9,412 more in the last 10 s');
    expect([summary.level, summary.suppressed]).toEqual([40, 9412]);
    // A new window logs again.
    log.warn('malformed', {}, 'malformed frame, closing connection');
    await vi.advanceTimersByTimeAsync(0);
    expect(lines.length).toBe(6);
    log.flush();
    expect(lines.length).toBe(6); // nothing was suppressed in this window
  });
});
