import v8 from 'node:v8';

/**
 * V8 garbage-collector settings for the server processes (`rmq start | namesrv | broker`), set at start-up because
 * these three are read each time V8 decides on a collection (unlike heap sizes, which only the node command line
 * sets).
 *
 * Why: the broker keeps a small JS heap (~13 MiB live) while tens to hundreds of MB/s pass through external
 * buffers. With V8's defaults the old generation's limit after each full collection sits ~15 MiB above the live
 * size, less than the young generation's 16 MiB, and V8 then starts incremental marking again at once: 64 KiB
 * sends made ~350 full mark-compacts in 40 s (`--trace-gc`: "finalize incremental marking via task"), each
 * marking the whole heap on the main and helper threads for nothing freed. With marking started at 80 % of the
 * limit (at once past 95 %) and the limit grown to 4x the live size (V8's own upper growing factor), the same
 * run made ~20.
 *
 * RMQ_V8_FLAGS replaces them (empty: V8's defaults).
 */
export const SERVER_GC_FLAGS = '--incremental-marking-soft-trigger=80 --incremental-marking-hard-trigger=95 --heap-growing-percent=300';

/** Applies SERVER_GC_FLAGS (or RMQ_V8_FLAGS); returns what was applied. */
export function applyServerGcFlags(env: NodeJS.ProcessEnv = process.env): string {
  const flags = (env.RMQ_V8_FLAGS ?? SERVER_GC_FLAGS).trim();
  if (flags) v8.setFlagsFromString(flags);
  return flags;
}
