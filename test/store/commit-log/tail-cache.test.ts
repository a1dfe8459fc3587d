import { describe, expect, it } from 'vitest';
import { TailCache } from '../../../src/store/commit-log/tail-cache.js';

const CHUNK = 64;

/** Fills one whole chunk at `offset` with `byte` and returns its buffer. */
function fill(cache: TailCache, offset: number, byte: number): Buffer {
  const { buf, pos } = cache.reserve(offset, CHUNK);
  buf.fill(byte, pos, pos + CHUNK);
  return buf;
}

describe('tail cache chunk reuse', () => {
  it('reuses an evicted chunk nobody viewed', () => {
    const cache = new TailCache(CHUNK, CHUNK);
    const first = fill(cache, 0, 1);
    fill(cache, CHUNK, 2);
    cache.evict(2 * CHUNK);
    expect(fill(cache, 2 * CHUNK, 3)).toBe(first);
    expect(cache.reusedChunks).toBe(1);
  });

  it('never reuses a chunk an unpinned view was taken of', () => {
    const cache = new TailCache(CHUNK, CHUNK);
    const first = fill(cache, 0, 1);
    const view = cache.read(8, 8)!;
    fill(cache, CHUNK, 2);
    cache.evict(2 * CHUNK);
    expect(fill(cache, 2 * CHUNK, 3)).not.toBe(first);
    expect([...view]).toEqual(new Array(8).fill(1));
  });

  it('keeps a pinned chunk until its pins are released, then reuses it', () => {
    const cache = new TailCache(CHUNK, CHUNK);
    const first = fill(cache, 0, 1);
    const pins = cache.newPins();
    const view = cache.readPinned(8, 8, pins)!;
    const again = cache.readPinned(16, 8, pins)!; // two views of one chunk
    fill(cache, CHUNK, 2);
    cache.evict(2 * CHUNK);
    const third = fill(cache, 2 * CHUNK, 3);
    expect(third).not.toBe(first);
    expect([...view, ...again]).toEqual(new Array(16).fill(1));
    pins.release();
    pins.release(); // twice: no effect
    expect(fill(cache, 3 * CHUNK, 4)).toBe(first);
    expect(cache.reusedChunks).toBe(1);
  });

  it('does not reuse a chunk still pinned by another reader', () => {
    const cache = new TailCache(CHUNK, CHUNK);
    const first = fill(cache, 0, 1);
    const a = cache.newPins();
    const b = cache.newPins();
    cache.readPinned(0, 8, a);
    cache.readPinned(8, 8, b);
    fill(cache, CHUNK, 2);
    cache.evict(2 * CHUNK);
    a.release();
    expect(fill(cache, 2 * CHUNK, 3)).not.toBe(first);
    b.release();
    expect(fill(cache, 3 * CHUNK, 4)).toBe(first);
  });

  it('does not reuse chunks cut off by a rewind, nor after clear', () => {
    const cache = new TailCache(CHUNK, CHUNK);
    fill(cache, 0, 1);
    const cut = fill(cache, CHUNK, 2);
    cache.truncate(CHUNK);
    fill(cache, CHUNK, 3);
    cache.evict(2 * CHUNK);
    expect(fill(cache, 2 * CHUNK, 4)).not.toBe(cut);
    cache.clear();
    expect(cache.reusedChunks).toBe(1);
    fill(cache, 3 * CHUNK, 5);
    expect(cache.reusedChunks).toBe(1);
  });
});
