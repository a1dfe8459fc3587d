// Names of the master/slave interop rows (compat/ha-compat.mjs), shared with the runner.
export function caseName(c) {
  const side = (k) => (k === 'ours' ? 'ours' : `official-${k}`);
  return `ha:${side(c.master)}-master/${side(c.slave)}-slave`;
}

/**
 * The mixed DLedger rows (compat/dledger-compat.mjs), shared with the runner: per official version V,
 * `ours+2xV` (our broker beside two official ones) and `2xours+V`. Kinds are per member n0, n1, n2.
 */
export const DLEDGER_SHAPES = {
  'ours+2x': (v) => [v, v, 'ours'],
  '2xours+': (v) => ['ours', 'ours', v],
};

export const dledgerRowName = (shape, version) => `dledger:${shape}${version}`;
