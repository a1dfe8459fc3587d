/** Java String.hashCode: int32 over UTF-16 code units (h = 31*h + c, wrapping). */
export function javaStringHashCode(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}

/**
 * Java String.hashCode of `prefix + s.substring(from, to)`, given hashOfPrefix = hashCode(prefix): the hash goes on
 * over the part's code units, so no joined string is built.
 */
export function javaStringHashCodeContinued(hashOfPrefix: number, s: string, from = 0, to = s.length): number {
  let h = hashOfPrefix;
  for (let i = from; i < to; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}
