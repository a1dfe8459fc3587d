// CRC32 (IEEE, as java.util.zip.CRC32). zlib.crc32 exists from Node 20.15; older 20.x fall back to a table.
// Longer inputs go to @node-rs/crc32 (carry-less multiply, as the JVM's CRC32 intrinsic): Node's bundled zlib
// computes it without, 3.3 GB/s against 10 GB/s here. Below SIMD_MIN_BYTES its call costs more than it saves.
// RMQ_CRC32=zlib, or a platform without its prebuilt binary, leaves zlib alone.
import { createRequire } from 'node:module';
import zlib from 'node:zlib';

type Crc32Fn = (data: Uint8Array, value?: number) => number;

const zlibCrc32 = (zlib as unknown as { crc32?: Crc32Fn }).crc32;

/** Inputs from this size on go to the SIMD implementation (measured crossover: 256–512 bytes). */
const SIMD_MIN_BYTES = 384;

function loadSimdCrc32(): Crc32Fn | undefined {
  if (process.env.RMQ_CRC32 === 'zlib') return undefined;
  try {
    const mod = createRequire(import.meta.url)('@node-rs/crc32') as { crc32?: Crc32Fn };
    return typeof mod.crc32 === 'function' ? mod.crc32 : undefined;
  } catch {
    return undefined;
  }
}

const simdCrc32 = loadSimdCrc32();

/** Which implementation long inputs use (for logs and tests). */
export const crc32Implementation = simdCrc32 ? '@node-rs/crc32' : zlibCrc32 ? 'zlib' : 'table';

const nativeCrc32: Crc32Fn | undefined =
  simdCrc32 && zlibCrc32
    ? (data, value = 0) => (data.length >= SIMD_MIN_BYTES ? simdCrc32(data, value) : zlibCrc32(data, value))
    : (simdCrc32 ?? zlibCrc32);

let table: Uint32Array | undefined;

function makeTable(): Uint32Array {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
}

/** Table CRC32; exported for tests (compared against zlib.crc32). */
export function crc32Table(data: Uint8Array, value = 0): number {
  const t = (table ??= makeTable());
  let c = ~value >>> 0;
  for (let i = 0; i < data.length; i++) c = t[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}

/** Unsigned CRC32 continuing from `value` (the CRC of the bytes before data). */
const crc32From: Crc32Fn = nativeCrc32 ?? crc32Table;

/** Unsigned CRC32 of data. */
export const crc32: (data: Uint8Array) => number = nativeCrc32
  ? (data) => nativeCrc32(data)
  : (data) => crc32Table(data);

/** BODYCRC as RocketMQ stores it: CRC32 with the sign bit cleared (UtilAll.crc32). */
export function bodyCrc32(body: Uint8Array): number {
  return crc32(body) & 0x7fffffff;
}

/** bodyCrc32 of the pieces' concatenation, without concatenating them. */
export function bodyCrc32Parts(parts: readonly Uint8Array[]): number {
  let c = 0;
  for (const p of parts) c = crc32From(p, c);
  return c & 0x7fffffff;
}
