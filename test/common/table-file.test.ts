// The one way tables are persisted (TableFile): temp file + fsync + rename with the old file kept as .bak, load
// falling back to the .bak, coalesced async saves, synchronous save at shutdown.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/common/logger.js';
import { TableFile, readTableFile } from '../../src/common/table-file.js';
import { tempDir, waitFor } from '../helpers/server.js';

let dir: string;
let file: string;

beforeEach(() => {
  dir = tempDir('table-file');
  file = path.join(dir, 'config', 'table.json');
});

afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A table whose encoded text is `{"v":<value>}`; counts how often it was encoded (one per write). */
function table(initial = 0) {
  const state = { value: initial, encodes: 0 };
  const t = new TableFile(file, () => {
    state.encodes++;
    return JSON.stringify({ v: state.value });
  }, silentLogger(), 'test table');
  return { t, state };
}

const onDisk = (f = file) => JSON.parse(fs.readFileSync(f, 'utf8')) as { v: number };

describe('TableFile', () => {
  it('writes atomically, keeps the previous version as .bak and leaves no temp file', async () => {
    const { t, state } = table(1);
    t.changed();
    await t.save();
    state.value = 2;
    t.changed();
    await t.save();
    expect(onDisk()).toEqual({ v: 2 });
    expect(onDisk(`${file}.bak`)).toEqual({ v: 1 });
    expect(fs.readdirSync(path.dirname(file)).sort()).toEqual(['table.json', 'table.json.bak']);
    expect(t.load()).toEqual({ v: 2 });
  });

  it('loads the .bak when the file is missing, empty or corrupt; says so when both are unreadable', () => {
    const parse = (s: string) => JSON.parse(s) as unknown;
    expect(readTableFile(file, parse)).toEqual({ status: 'missing' });
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(`${file}.bak`, '{"v":7}');
    expect(readTableFile(file, parse)).toEqual({ status: 'loaded', value: { v: 7 }, fromBackup: true });
    fs.writeFileSync(file, '  \n');
    expect(readTableFile(file, parse)).toEqual({ status: 'loaded', value: { v: 7 }, fromBackup: true });
    fs.writeFileSync(file, '{"v":');
    expect(readTableFile(file, parse)).toEqual({ status: 'loaded', value: { v: 7 }, fromBackup: true });
    fs.writeFileSync(`${file}.bak`, 'nonsense');
    const both = readTableFile(file, parse);
    expect(both.status).toBe('unreadable');
    // The lenient load used by the broker's tables starts empty instead.
    expect(table().t.load()).toBeUndefined();
  });

  it('folds changes made during a save into one more save; each save() resolves once its change is on disk', async () => {
    const { t, state } = table();
    const waits: Array<Promise<void>> = [];
    const seen: number[] = [];
    for (let i = 1; i <= 5; i++) {
      state.value = i;
      t.changed();
      const value = i;
      waits.push(t.save().then(() => {
        seen.push(onDisk().v);
        expect(onDisk().v).toBeGreaterThanOrEqual(value);
      }));
    }
    await Promise.all(waits);
    expect(onDisk()).toEqual({ v: 5 });
    // The first save took value 1; the other four changes went into one more save.
    expect(state.encodes).toBe(2);
    expect(seen).toEqual([1, 5, 5, 5, 5]);
    // Nothing changed since: no write.
    await t.save();
    expect(state.encodes).toBe(2);
  });

  it('a failed save rejects, is retried by the next one, and close() writes synchronously after the running save', async () => {
    const { t, state } = table(1);
    fs.writeFileSync(dir + '/config', 'a file where the directory should be');
    t.changed();
    await expect(t.save()).rejects.toThrow();
    fs.rmSync(dir + '/config');
    await t.save(); // still marked changed
    expect(onDisk()).toEqual({ v: 1 });

    state.value = 2;
    t.request();
    state.value = 3;
    t.changed();
    await t.close();
    expect(onDisk()).toEqual({ v: 3 });
    expect(fs.readdirSync(path.dirname(file)).sort()).toEqual(['table.json', 'table.json.bak']);
  });

  it('saveEvery writes while changed and stops at close()', async () => {
    const { t, state } = table(1);
    t.changed();
    t.saveEvery(10);
    await waitFor(() => fs.existsSync(file) && onDisk().v === 1, 5000, 'the periodic save');
    state.value = 2;
    t.changed();
    await waitFor(() => onDisk().v === 2, 5000, 'the second periodic save');
    const encodes = state.encodes;
    await t.close(true);
    expect(state.encodes).toBe(encodes); // unchanged: close(onlyIfChanged) does not write
  });
});
