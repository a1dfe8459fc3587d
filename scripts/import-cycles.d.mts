export interface ImportCycle {
  /** Files of the cycle relative to the scanned directory, starting at the alphabetically first. */
  files: string[];
  /** At least one edge of the cycle is a type-only import (erased at run time). */
  typeOnly: boolean;
}
export function importsOf(source: string): Array<{ spec: string; typeOnly: boolean }>;
export function findImportCycles(dir: string): { files: number; cycles: ImportCycle[]; truncated: boolean };
export function formatCycle(cycle: ImportCycle): string;
