// The background flush (DLedgerMmapFileStore.FlushDataService): written data and index files are fdatasync'ed
// shortly after an append without anyone asking, and the checkpoint is rewritten on its timer.
import nodeFs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, it } from 'vitest';
import { setStoreFs, type StoreFs } from '../../../../src/store/io.js';
import { bodyFor, openStore, tempDir } from './helpers.js';

const dirs: string[] = [];
let restore: StoreFs | null = null;
afterEach(() => {
  if (restore) setStoreFs(restore);
  restore = null;
  for (const d of dirs.splice(0)) nodeFs.rmSync(d, { recursive: true, force: true });
});

/** node:fs with fdatasync reporting which files it synced. */
function syncWatchingFs(onSync: (file: string) => void): StoreFs {
  const paths = new Map<number, string>();
  return {
    ...nodeFs,
    openSync: ((p: nodeFs.PathLike, flags: nodeFs.OpenMode, mode?: nodeFs.Mode | null) => {
      const fd = nodeFs.openSync(p, flags, mode);
      paths.set(fd, String(p));
      return fd;
    }) as typeof nodeFs.openSync,
    fdatasync: ((fd: number, cb: nodeFs.NoParamCallback) =>
      nodeFs.fdatasync(fd, (err) => {
        if (!err) onSync(paths.get(fd) ?? '?');
        cb(err);
      })) as typeof nodeFs.fdatasync,
  } as StoreFs;
}

async function until(cond: () => boolean, what: string, deadlineMs = 10_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('background flush', () => {
  it('fdatasyncs the data and index files written, and rewrites the checkpoint on its timer', async () => {
    const synced = new Set<string>();
    restore = setStoreFs(syncWatchingFs((f) => synced.add(path.relative(dirs[0]!, f))));
    const d = tempDir();
    dirs.push(d);
    const s = openStore(d, { checkpointIntervalMs: 50 });
    s.appendAsLeader(bodyFor(0), 1);
    await until(() => synced.has('data/00000000000000000000') && synced.has('index/00000000000000000000'), 'the flush');
    s.updateCommittedIndex(0);
    const file = path.join(d, 'checkpoint');
    await until(() => nodeFs.existsSync(file) && nodeFs.readFileSync(file, 'utf8') === 'committedIndex=0\nendIndex=0\n', 'the checkpoint');
    s.close();
  });
});
