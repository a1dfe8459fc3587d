// The cold-backlog scenario's page-cache tools: drop the cache (root only) and measure how much of a store is
// still resident in it.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const DROP_CACHES = '/proc/sys/vm/drop_caches';

/** Why the page cache cannot be dropped here, or undefined when it can (checked without dropping it). */
export function dropCachesRefusal() {
  if (process.platform !== 'linux') return `not Linux (${process.platform})`;
  try {
    fs.accessSync(DROP_CACHES, fs.constants.W_OK);
  } catch (e) {
    return `${DROP_CACHES} is not writable (${e.code}): run as root to measure a cold backlog`;
  }
  return undefined;
}

/**
 * Writes dirty pages back (sync) and drops the page cache, dentries and inodes (`echo 3`). Returns undefined on
 * success, else the reason. Note that the kernel keeps pages some process has mapped: a broker that reads its
 * commit log through mmap keeps what it mapped (residentBytes shows how much).
 */
export function dropCaches() {
  try {
    execFileSync('sync');
    fs.writeFileSync(DROP_CACHES, '3\n');
    return undefined;
  } catch (e) {
    return `could not drop the page cache: ${e.message}`;
  }
}

/** Bytes of the files in `dir` resident in the page cache (fincore), or undefined when it cannot be measured. */
export function residentBytes(dir) {
  let files;
  try {
    files = fs.readdirSync(dir).map((f) => path.join(dir, f)).filter((f) => fs.statSync(f).isFile());
  } catch {
    return undefined;
  }
  if (files.length === 0) return 0;
  try {
    const out = execFileSync('fincore', ['--bytes', '--noheadings', '--raw', '-o', 'RES', ...files], { encoding: 'utf8' });
    return out.split('\n').filter(Boolean).reduce((a, l) => a + Number(l.trim()), 0);
  } catch {
    return undefined;
  }
}
