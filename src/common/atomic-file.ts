import fs from 'node:fs';
import path from 'node:path';

// Persisted tables (topics, offsets, delay and timer progress) are saved by writing a temp file, fsyncing it,
// keeping the previous file as `.bak` and renaming (Java ConfigManager), so a crash leaves the old or the new
// version. Periodic saves use the asynchronous form to keep the event loop free; shutdown uses the synchronous one.

export async function saveFileAtomic(file: string, text: string | Uint8Array): Promise<void> {
  await fs.promises.mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp`;
  const fh = await fs.promises.open(tmp, 'w');
  try {
    await fh.writeFile(text);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await fs.promises.copyFile(file, `${file}.bak`).catch(() => undefined);
  await fs.promises.rename(tmp, file);
}

export function saveFileAtomicSync(file: string, text: string | Uint8Array): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp`;
  const fd = fs.openSync(tmp, 'w');
  try {
    fs.writeFileSync(fd, text);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  if (fs.existsSync(file)) fs.copyFileSync(file, `${file}.bak`);
  fs.renameSync(tmp, file);
}
