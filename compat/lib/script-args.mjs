// Argument handling, log lines and process guards shared by the seeded fault scripts (ha-faults.mjs,
// dledger-faults.mjs): `--key=value` flags onto a table of defaults, a seed that replays a run, a timestamped logger,
// and handlers that stop every server a crashed or interrupted script started.
import { children, killTree, stopAllServers } from './servers.mjs';

/**
 * `--some-key=value` (or `--flag` for a boolean) onto `defaults` (camelCase keys); an unknown flag exits 2.
 * A boolean takes `--flag=false`; every other value stays a string.
 */
export function parseFlags(script, argv, defaults) {
  const o = { ...defaults };
  for (const a of argv) {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(a);
    const key = m?.[1].replace(/-([a-z])/g, (_, c) => c.toUpperCase());
    if (!m || !(key in o)) {
      console.error(`${script}: unexpected argument ${a}`);
      process.exit(2);
    }
    o[key] = typeof o[key] === 'boolean' ? m[2] !== 'false' : (m[2] ?? '');
  }
  return o;
}

/** The seed given (a number), or a fresh random one when empty. */
export function seedOf(text) {
  if (text === '' || text === undefined) return Math.floor(Math.random() * 2 ** 31);
  const n = Number(text);
  if (!Number.isInteger(n)) {
    console.error(`seed must be an integer, got ${text}`);
    process.exit(2);
  }
  return n;
}

/** `[script HH:MM:SS] message` on stdout. */
export const sayer = (script) => (m) => console.log(`[${script} ${new Date().toISOString().slice(11, 19)}] ${m}`);

/**
 * Ctrl-C / SIGTERM and crashes stop every server first (official brokers outlive a crashed script). `beforeStop`
 * runs first (e.g. SIGCONT for stalled processes, which could not act on SIGTERM).
 */
export function guardProcess(script, beforeStop = () => undefined) {
  const stop = () => {
    beforeStop();
    for (const ch of children) killTree(ch, 'SIGKILL');
    // the script's own flow goes on while the servers stop and may start a child meanwhile: sweep again
    stopAllServers().finally(() => {
      for (const ch of children) killTree(ch, 'SIGKILL');
      process.exit(130);
    });
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  const crash = (e) => {
    console.error(`${script}: ${e?.stack ?? e}`);
    beforeStop();
    stopAllServers().finally(() => process.exit(1));
  };
  process.on('uncaughtException', crash);
  process.on('unhandledRejection', crash);
}
