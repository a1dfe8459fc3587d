/** Java String.hashCode: int32 over UTF-16 code units (h = 31*h + c, wrapping). */
export function javaStringHashCode(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}
