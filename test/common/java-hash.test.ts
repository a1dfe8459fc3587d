import { describe, expect, it } from 'vitest';
import { javaStringHashCode, javaStringHashCodeContinued } from '../../src/common/java-hash.js';

describe('Java String.hashCode', () => {
  it('matches values Java computes', () => {
    // "TagA".hashCode(), "".hashCode(), and one that wraps past Integer.MAX_VALUE
    expect(javaStringHashCode('TagA')).toBe(2598919);
    expect(javaStringHashCode('')).toBe(0);
    expect(javaStringHashCode('polygenelubricants')).toBe(-2147483648);
  });

  it('continues a prefix hash over a part of another string as if the two were joined', () => {
    const prefix = 'TopicTest#';
    const keys = 'order-1 schlüssel ключ 7F0000011F2C18B4AAC2000000000001';
    const h = javaStringHashCode(prefix);
    let at = 0;
    for (const key of keys.split(' ')) {
      expect(javaStringHashCodeContinued(h, keys, at, at + key.length)).toBe(javaStringHashCode(prefix + key));
      at += key.length + 1;
    }
    expect(javaStringHashCodeContinued(h, 'whole')).toBe(javaStringHashCode(`${prefix}whole`));
  });
});
