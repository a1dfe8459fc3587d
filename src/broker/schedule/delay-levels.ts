import { ConfigError } from '../../common/config.js';

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses `messageDelayLevel` ("1s 5s ... 2h"; units s/m/h/d) into delays in ms; index 0 is level 1. */
export function parseMessageDelayLevel(spec: string): number[] {
  const out: number[] = [];
  for (const part of spec.trim().split(/\s+/)) {
    if (part === '') continue;
    const unit = UNIT_MS[part.slice(-1)];
    const n = Number(part.slice(0, -1));
    if (unit === undefined || !Number.isFinite(n) || n < 0) {
      throw new ConfigError(`messageDelayLevel: bad entry "${part}" (expected a number followed by s, m, h or d)`);
    }
    out.push(Math.round(n * unit));
  }
  if (out.length === 0) throw new ConfigError('messageDelayLevel: no levels given');
  return out;
}
