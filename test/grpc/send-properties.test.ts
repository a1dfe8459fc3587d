import { describe, expect, it } from 'vitest';
import { javaStringHashCode } from '../../src/common/java-hash.js';
import { consistentHash } from '../../src/grpc/send-properties.js';

describe('Guava consistentHash (message group → write queue)', () => {
  // Vectors produced by Guava 32 Hashing.consistentHash (brief §3.4), buckets 1, 2, 4, 8, 16.
  const vectors: Array<[string, number[]]> = [
    ['g1', [0, 0, 0, 6, 9]],
    ['order-1', [0, 0, 3, 3, 3]],
    ['order-2', [0, 0, 2, 2, 11]],
    ['user-42', [0, 1, 1, 1, 1]],
    ['', [0, 0, 0, 0, 0]],
    ['长', [0, 1, 3, 3, 10]],
  ];
  for (const [key, expected] of vectors) {
    it(`"${key}"`, () => {
      expect([1, 2, 4, 8, 16].map((n) => consistentHash(javaStringHashCode(key), n))).toEqual(expected);
    });
  }
});
