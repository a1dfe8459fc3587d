// Names of the master/slave interop rows (compat/ha-compat.mjs), shared with the runner.
export function caseName(c) {
  const side = (k) => (k === 'ours' ? 'ours' : `official-${k}`);
  return `ha:${side(c.master)}-master/${side(c.slave)}-slave`;
}
