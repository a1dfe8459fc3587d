// Config schemas: each key once, with its type, default, bounds and whether it may change on a running server.
// The store's keys (store/config.ts) and the broker's (common/config.ts) are written in this form; broker.conf,
// `--key=value` flags, mqadmin updateBrokerConfig and the store's own input are all checked against it.

/** A bad configuration value: names the key; the CLI prints it on one line and exits with status 2. */
export class ConfigError extends Error {}

interface KeyCommon {
  /**
   * The key may change on a running server (mqadmin updateBrokerConfig): everything that uses it reads the live
   * value or is told of the change. Keys without it are refused at run time with a remark naming them.
   */
  live?: boolean;
}

export type KeySpec = KeyCommon &
  (
    | { type: 'int'; default: number; min?: number; max?: number }
    | { type: 'bool'; default: boolean }
    /** `check` throws (any Error) on a value of the right type but the wrong form. */
    | { type: 'string'; default: string; check?: (value: string) => unknown }
    | { type: 'enum'; default: string; values: readonly string[] }
  );

export type Schema = Record<string, KeySpec>;

type ValueOf<S extends KeySpec> = S extends { type: 'int' }
  ? number
  : S extends { type: 'bool' }
    ? boolean
    : S extends { type: 'enum'; values: readonly (infer V extends string)[] }
      ? V
      : string;

export type ConfigOf<S extends Schema> = { -readonly [K in keyof S]: ValueOf<S[K]> };

export function defaults<S extends Schema>(schema: S): ConfigOf<S> {
  const out: Record<string, unknown> = {};
  for (const [k, spec] of Object.entries(schema)) out[k] = spec.default;
  return out as ConfigOf<S>;
}

/** The schema's keys taken from a wider object (the store's settings out of the broker's config). */
export function pick<S extends Schema>(schema: S, source: Readonly<Record<string, unknown>>): Partial<ConfigOf<S>> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(schema)) if (source[k] !== undefined) out[k] = source[k];
  return out as Partial<ConfigOf<S>>;
}

/** Throws ConfigError unless `value` fits the key (type, bounds, allowed values, form). */
export function checkValue(key: string, spec: KeySpec, value: unknown): void {
  switch (spec.type) {
    case 'int':
      if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new ConfigError(`${key}: expected an integer, got ${String(value)}`);
      if (spec.min !== undefined && value < spec.min) throw new ConfigError(`${key}: ${value} is below the minimum ${spec.min}`);
      if (spec.max !== undefined && value > spec.max) throw new ConfigError(`${key}: ${value} is above the maximum ${spec.max}`);
      return;
    case 'bool':
      if (typeof value !== 'boolean') throw new ConfigError(`${key}: expected true or false, got ${String(value)}`);
      return;
    case 'enum':
      if (typeof value !== 'string' || !spec.values.includes(value)) {
        throw new ConfigError(`${key}: expected one of ${spec.values.join(', ')}, got "${String(value)}"`);
      }
      return;
    default:
      if (typeof value !== 'string') throw new ConfigError(`${key}: expected a string, got ${String(value)}`);
      if (spec.check) {
        try {
          spec.check(value);
        } catch (err) {
          throw new ConfigError(`${key}: ${(err as Error).message}`);
        }
      }
  }
}

/** A properties-file string as the key's value; throws ConfigError on a bad one. */
export function parseValue(key: string, spec: KeySpec, raw: string): unknown {
  const value = raw.trim();
  let out: unknown = value;
  if (spec.type === 'int') {
    if (!/^-?\d+$/.test(value)) throw new ConfigError(`${key}: expected an integer, got "${raw}"`);
    out = Number(value);
  } else if (spec.type === 'bool') {
    if (!/^(true|false)$/i.test(value)) throw new ConfigError(`${key}: expected true or false, got "${raw}"`);
    out = value.toLowerCase() === 'true';
  }
  checkValue(key, spec, out);
  return out;
}

/**
 * Applies string settings (from a properties file or `--key=value` flags) onto a config. Keys the schema
 * does not know are returned (Java ignores them too); a known key with a bad value throws ConfigError.
 */
export function applySettings<S extends Schema>(schema: S, target: ConfigOf<S>, settings: Record<string, string>): string[] {
  const unknown: string[] = [];
  const t = target as Record<string, unknown>;
  for (const [key, raw] of Object.entries(settings)) {
    const spec = Object.hasOwn(schema, key) ? schema[key] : undefined;
    if (!spec) {
      unknown.push(key);
      continue;
    }
    t[key] = parseValue(key, spec, raw);
  }
  return unknown;
}

/** Keys of `changes` whose value differs from `current` but that may not change at run time. */
export function restartOnlyChanges(schema: Schema, current: Readonly<Record<string, unknown>>, changes: Readonly<Record<string, unknown>>): string[] {
  return Object.keys(changes).filter((k) => Object.hasOwn(schema, k) && !schema[k].live && changes[k] !== current[k]);
}
