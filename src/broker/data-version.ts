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

/** A DataVersion from untrusted JSON (a file, a master's answer); missing fields default as Java's do. */
export function dataVersionOf(raw: Partial<Record<keyof DataVersion, unknown>>): DataVersion {
  return {
    stateVersion: Number(raw.stateVersion ?? 0) || 0,
    timestamp: Number(raw.timestamp ?? Date.now()) || 0,
    counter: Number(raw.counter ?? 0) || 0,
  };
}

/** Java DataVersion.equals (5.x: stateVersion too; 4.9.x sends none, read as 0). */
export function dataVersionEquals(a: DataVersion, b: DataVersion): boolean {
  return a.timestamp === b.timestamp && a.counter === b.counter && a.stateVersion === b.stateVersion;
}
