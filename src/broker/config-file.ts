import fs from 'node:fs';
import { parseFastjson } from '../common/fastjson.js';

/**
 * Persisted config tables under `<store>/config/` (Java ConfigManager): written to a temp file, fsynced,
 * the old file kept as `<file>.bak`, then renamed into place; a missing or unparsable main file falls back to
 * the .bak. Files are small; synchronous I/O is acceptable off the message hot path.
 */
export function loadConfigFile(file: string): unknown | undefined {
  for (const candidate of [file, `${file}.bak`]) {
    let text: string;
    try {
      text = fs.readFileSync(candidate, 'utf8');
    } catch {
      continue;
    }
    if (text.trim() === '') continue;
    try {
      return parseFastjson(text);
    } catch {
      continue;
    }
  }
  return undefined;
}

export { saveFileAtomic as saveConfigFileAsync, saveFileAtomicSync as saveConfigFile } from '../common/atomic-file.js';
