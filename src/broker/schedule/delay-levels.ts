import { ConfigError } from '../../common/config.js';
import { parseDelayLevels } from '../../store/index.js';

/**
 * Parses `messageDelayLevel` ("1s 5s ... 2h"; units s/m/h/d) into delays in ms, index 0 = level 1, with the
 * store's parser; a bad value becomes a ConfigError naming the key.
 */
export function parseMessageDelayLevel(spec: string): number[] {
  let levels: number[];
  try {
    levels = parseDelayLevels(spec);
  } catch (err) {
    throw new ConfigError(`messageDelayLevel: ${(err as Error).message}`);
  }
  if (levels.length === 0) throw new ConfigError('messageDelayLevel: no levels given');
  if (levels.some((ms) => !(ms >= 0))) throw new ConfigError(`messageDelayLevel: negative delay in "${spec}"`);
  return levels.map((ms) => Math.round(ms));
}
