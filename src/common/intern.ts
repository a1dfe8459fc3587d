// One canonical string object per name that the hot paths look up in maps (topics). A name read from a request
// header is a new string each time, and one of 13 characters or more is a slice of the whole header text: every
// Map lookup with it compares contents through the slice (~40 ns here, against ~5 ns for the map's own key
// object), and a send looks its topic up in several maps. Stores keep the interned object (topic configs, queue
// tables) and the send path swaps the header's copy for it once per request.

/**
 * The engine's interned copy of `s`: flat, its hash computed, and the same object for every equal string
 * interned (property names are interned; ~0.3 us, so this is for names created once, not for each request).
 */
export function internString(s: string): string {
  const holder: Record<string, number> = { [s]: 0 };
  for (const key in holder) return key;
  return s;
}
