// The store reaches its commit log through CommitLogPort, built by the factory it is given.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMessageStore, type CommitLogPort } from '../../src/store/index.js';
import { localCommitLog, mergePutStatus } from '../../src/store/commit-log/commit-log.js';
import { TINY, makeMessage, makeTempDir, removeDir } from './helpers.js';

let root: string;

beforeEach(async () => {
  root = await makeTempDir();
});

afterEach(async () => {
  await removeDir(root);
});

describe('commit-log port', () => {
  it('builds the store on the commit log the factory returns', async () => {
    const built: CommitLogPort[] = [];
    const store = createMessageStore({ storePathRootDir: root, ...TINY }, undefined, undefined, (deps) => {
      const log = localCommitLog(deps);
      built.push(log);
      return log;
    });
    await store.start();
    expect(built).toHaveLength(1);
    expect(store.commitLog).toBe(built[0]);
    const put = await store.putMessage(makeMessage('Port', 0, 'via the port'));
    expect(put.status).toBe('PUT_OK');
    expect(built[0]!.writtenOffset).toBe(put.commitLogOffset + put.wroteBytes);
    expect((await store.getMessage('Port', 0, 0, 32, 1 << 20)).records).toHaveLength(1);
    await store.shutdown();
  });

  it('merges stage outcomes as Java does: any non-OK wins, a later stage over an earlier one', () => {
    expect(mergePutStatus('PUT_OK', 'PUT_OK')).toBe('PUT_OK');
    expect(mergePutStatus('PUT_OK', 'FLUSH_DISK_TIMEOUT')).toBe('FLUSH_DISK_TIMEOUT');
    expect(mergePutStatus('FLUSH_DISK_TIMEOUT', 'PUT_OK')).toBe('FLUSH_DISK_TIMEOUT');
    expect(mergePutStatus('FLUSH_DISK_TIMEOUT', 'FLUSH_SLAVE_TIMEOUT')).toBe('FLUSH_SLAVE_TIMEOUT');
  });
});
