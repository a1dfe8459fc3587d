// Every way a put can fail once it has passed validation leaves its queue without a hole: the failed put takes no
// queue offset (or hands it back), the next put gets the next offset, and a restart finds the queue contiguous.
// Failures come through the store's I/O seam (setStoreFs) or, for the encoder, through the commit-log port itself.
import nodeFs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type DefaultMessageStore, type StoreFs, decodeRecord, setStoreFs } from '../../src/store/index.js';
import { makeMessage, makeTempDir, openStore, removeDir } from './helpers.js';

type Failure = 'EIO' | 'ENOSPC';

/** node:fs, except that the next `failNext` commit-log writes or syncs throw the given error. */
function failingFs(root: string): { fs: StoreFs; failWrites: (code: Failure, count?: number) => void; failSyncs: (count?: number) => void } {
  const commitLogFds = new Set<number>();
  let writeFailure: Failure | null = null;
  let writesToFail = 0;
  let syncsToFail = 0;
  const isCommitLog = (p: unknown) => typeof p === 'string' && p.startsWith(path.join(root, 'commitlog'));
  const errno = (code: string): NodeJS.ErrnoException => Object.assign(new Error(`${code}: injected`), { code });
  const maybeFailWrite = (fd: number): void => {
    if (writesToFail > 0 && commitLogFds.has(fd)) {
      writesToFail--;
      throw errno(writeFailure!);
    }
  };
  const fs: StoreFs = {
    ...nodeFs,
    openSync: ((p: string, flags: nodeFs.OpenMode, mode?: nodeFs.Mode) => {
      const fd = nodeFs.openSync(p, flags, mode);
      if (isCommitLog(p)) commitLogFds.add(fd);
      return fd;
    }) as StoreFs['openSync'],
    open: ((p: string, flags: nodeFs.OpenMode, mode: nodeFs.Mode, cb: (e: Error | null, fd?: number) => void) => {
      nodeFs.open(p, flags, mode, (err, fd) => {
        if (!err && isCommitLog(p)) commitLogFds.add(fd);
        cb(err, fd);
      });
    }) as unknown as StoreFs['open'],
    writevSync: ((fd: number, bufs: NodeJS.ArrayBufferView[], pos?: number) => {
      maybeFailWrite(fd);
      return nodeFs.writevSync(fd, bufs, pos);
    }) as StoreFs['writevSync'],
    writev: ((fd: number, bufs: NodeJS.ArrayBufferView[], pos: number, cb: (e: Error | null, n?: number) => void) => {
      try {
        maybeFailWrite(fd);
      } catch (err) {
        setImmediate(cb, err as Error);
        return;
      }
      nodeFs.writev(fd, bufs, pos, cb);
    }) as unknown as StoreFs['writev'],
    fdatasync: ((fd: number, cb: (e: Error | null) => void) => {
      if (syncsToFail > 0 && commitLogFds.has(fd)) {
        syncsToFail--;
        setImmediate(cb, errno('EIO'));
        return;
      }
      nodeFs.fdatasync(fd, cb);
    }) as StoreFs['fdatasync'],
  };
  return {
    fs,
    failWrites: (code, count = 1) => {
      writeFailure = code;
      writesToFail = count;
    },
    failSyncs: (count = 1) => {
      syncsToFail = count;
    },
  };
}

let root: string;
let previousFs: StoreFs | null = null;

beforeEach(async () => {
  root = await makeTempDir();
});

afterEach(async () => {
  if (previousFs) setStoreFs(previousFs);
  previousFs = null;
  await removeDir(root);
});

/** Puts one message to Q:0 and returns its status and queue offset. */
async function put(store: DefaultMessageStore, body: string): Promise<[string, number]> {
  const r = await store.putMessage(makeMessage('Q', 0, body));
  return [r.status, r.queueOffset];
}

/** Every entry of Q:0 from 0 to max, with its body: a hole shows as a missing or placeholder entry. */
async function queueBodies(store: DefaultMessageStore): Promise<string[]> {
  const out: string[] = [];
  for (let offset = 0; offset < store.getMaxOffsetInQueue('Q', 0); ) {
    const r = await store.getMessage('Q', 0, offset, 32, 1 << 20);
    if (r.status !== 'FOUND') {
      out.push(`<${r.status} at ${offset}>`);
      offset++;
      continue;
    }
    for (const rec of r.records) {
      const d = decodeRecord(rec);
      out.push(d.queueOffset === offset ? d.body.toString() : `<entry ${offset} points at ${d.queueOffset}>`);
      offset++;
    }
  }
  return out;
}

describe('a put failing after validation leaves no queue hole', () => {
  it('an int64 a JS number cannot hold exactly is refused before any offset is taken', async () => {
    const store = await openStore(root);
    expect(await put(store, 'a')).toEqual(['PUT_OK', 0]);
    for (const bornTimestamp of [2 ** 63, 2 ** 53, -(2 ** 63), Number.NaN, 1e308]) {
      const r = await store.putMessage({ ...makeMessage('Q', 0, 'bad'), bornTimestamp });
      expect([r.status, r.remark]).toEqual(['MESSAGE_ILLEGAL', expect.stringContaining('bornTimestamp')]);
    }
    const flagged = await store.putMessage({ ...makeMessage('Q', 0, 'bad'), flag: 2 ** 31 });
    expect(flagged.status).toBe('MESSAGE_ILLEGAL');
    expect(await put(store, 'b')).toEqual(['PUT_OK', 1]);
    expect(await queueBodies(store)).toEqual(['a', 'b']);
    await store.shutdown();
  });

  it('a record that fails to encode in the commit log hands nothing out (offsets, cache, dispatch)', async () => {
    const store = await openStore(root);
    expect(await put(store, 'a')).toEqual(['PUT_OK', 0]);
    const cq = store.cqStore.getOrCreate('Q', 0);
    const good = makeMessage('Q', 0, 'never');
    // Straight to the port, past the store's checks: an int64 beyond the record's range makes the encoder throw
    // after the first record of the batch was already encoded.
    const prepared = [good, { ...good, bornTimestamp: 2 ** 70 }].map((msg) => ({
      msg, totalSize: 0, sysFlag: 0, bodyCrc: 0, propertiesLength: Buffer.byteLength(msg.propertiesString), queued: true,
      topicBytes: Buffer.from(msg.topic),
    }));
    const { encodeRecordSize, topicBytesOf } = await import('../../src/store/record.js');
    for (const p of prepared) p.totalSize = encodeRecordSize(0, p.msg.body.length, topicBytesOf('Q').length, p.propertiesLength);
    const total = prepared.reduce((a, p) => a + p.totalSize, 0);
    const r = await store.commitLog.append(prepared, total, cq);
    expect(r.status).toBe('UNKNOWN_ERROR');
    expect(cq.nextQueueOffset).toBe(1);
    expect(await put(store, 'b')).toEqual(['PUT_OK', 1]);
    expect(await queueBodies(store)).toEqual(['a', 'b']);
    await store.shutdown();
    const again = await openStore(root);
    expect(await queueBodies(again)).toEqual(['a', 'b']);
    await again.shutdown();
  });

  it('a full disk (ENOSPC) refuses the puts not yet written and hands their offsets back', async () => {
    const f = failingFs(root);
    previousFs = setStoreFs(f.fs);
    const store = await openStore(root);
    expect(await put(store, 'a')).toEqual(['PUT_OK', 0]);
    f.failWrites('ENOSPC');
    const refused = await Promise.all([put(store, 'x1'), put(store, 'x2')]);
    expect(refused.map((r) => r[0])).toEqual(['SERVICE_NOT_AVAILABLE', 'SERVICE_NOT_AVAILABLE']);
    // The disk guard measures space again (there is some) and lets puts in.
    await store.cleaner.checkDiskSpace();
    expect(store.cleaner.diskFull).toBe(false);
    expect(await put(store, 'b')).toEqual(['PUT_OK', 1]);
    expect(await queueBodies(store)).toEqual(['a', 'b']);
    await store.shutdown();
    setStoreFs(previousFs);
    const again = await openStore(root);
    expect(await queueBodies(again)).toEqual(['a', 'b']);
    await again.shutdown();
  });

  it('a failed write (EIO) stops the store; after a restart the queue continues without a hole', async () => {
    const f = failingFs(root);
    previousFs = setStoreFs(f.fs);
    const store = await openStore(root);
    expect(await put(store, 'a')).toEqual(['PUT_OK', 0]);
    f.failWrites('EIO');
    const [failed] = await put(store, 'x');
    expect(failed).toBe('UNKNOWN_ERROR');
    const after = await store.putMessage(makeMessage('Q', 0, 'y'));
    expect(after.status).toBe('SERVICE_NOT_AVAILABLE');
    expect(after.remark ?? '').not.toContain(root);
    await store.shutdown();
    setStoreFs(previousFs);
    const again = await openStore(root);
    expect(await put(again, 'b')).toEqual(['PUT_OK', 1]);
    expect(await queueBodies(again)).toEqual(['a', 'b']);
    await again.shutdown();
  });

  it('a failed fdatasync (SYNC_FLUSH) answers FLUSH_DISK_TIMEOUT; the message is stored at its offset', async () => {
    const f = failingFs(root);
    previousFs = setStoreFs(f.fs);
    const store = await openStore(root, { flushDiskType: 'SYNC_FLUSH' });
    expect(await put(store, 'a')).toEqual(['PUT_OK', 0]);
    f.failSyncs();
    expect(await put(store, 'b')).toEqual(['FLUSH_DISK_TIMEOUT', 1]);
    expect(await put(store, 'c')).toEqual(['PUT_OK', 2]);
    expect(await queueBodies(store)).toEqual(['a', 'b', 'c']);
    await store.shutdown();
  });
});
