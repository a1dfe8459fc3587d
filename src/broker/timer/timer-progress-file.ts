import fs from 'node:fs';
import path from 'node:path';

// The timer progress file is rewritten every second while deliveries happen, so the periodic save is
// asynchronous; the one at shutdown is synchronous. Both write a temp file, fsync it, keep the previous file as
// `.bak` and rename (as broker/config-file.ts does), so a crash leaves the old or the new version.

export async function saveFileAtomic(file: string, text: string): Promise<void> {
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

export function saveFileAtomicSync(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp`;
  const fd = fs.openSync(tmp, 'w');
  try {
    fs.writeSync(fd, text);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  if (fs.existsSync(file)) fs.copyFileSync(file, `${file}.bak`);
  fs.renameSync(tmp, file);
}
