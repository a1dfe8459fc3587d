/** Java DataVersion: bumped on every change of a persisted table. */
export interface DataVersion {
  stateVersion: number;
  timestamp: number;
  counter: number;
}

export function newDataVersion(): DataVersion {
  return { stateVersion: 0, timestamp: Date.now(), counter: 0 };
}

export function bumpDataVersion(v: DataVersion): void {
  v.counter++;
  v.timestamp = Date.now();
}
