import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { fastjsonEntries, parseFastjson, stringifyFastjson } from '../common/fastjson.js';

/** The KV config file exists but cannot be read back: start-up fails rather than overwrite it with nothing. */
export class KvConfigLoadError extends Error {}

/**
 * Namespaced key/value config (Java: namesrv/kvconfig/KVConfigManager.java). Persisted after every change as
 * `{"configTable":{ns:{k:v}}}`, written to a temp file, fsynced and renamed over the old one.
 */
export class KvConfigManager {
  private readonly configTable = new Map<string, Map<string, string>>();
  private persistChain: Promise<void> = Promise.resolve();

  constructor(
    private readonly filePath: string,
    private readonly logger: Logger,
  ) {}

  /** Loads the file if it exists (Java: load() at start). */
  async load(): Promise<void> {
    let text: string;
    try {
      text = await fs.promises.readFile(this.filePath, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw new KvConfigLoadError(`cannot read KV config ${this.filePath}: ${(err as Error).message}`);
    }
    if (text.trim() === '') return;
    let root: unknown;
    try {
      root = parseFastjson(text);
    } catch (err) {
      throw new KvConfigLoadError(`KV config ${this.filePath} is not valid JSON: ${(err as Error).message}`);
    }
    const table = fastjsonEntries(root).find(([k]) => k === 'configTable')?.[1];
    for (const [ns, kv] of fastjsonEntries(table)) {
      const m = new Map<string, string>();
      for (const [k, v] of fastjsonEntries(kv)) {
        if (v !== null && v !== undefined) m.set(String(k), typeof v === 'string' ? v : String(v));
      }
      this.configTable.set(String(ns), m);
    }
    this.logger.info({ file: this.filePath, namespaces: this.configTable.size }, 'KV config loaded');
  }

  get(namespace: string, key: string): string | undefined {
    return this.configTable.get(namespace)?.get(key);
  }

  /** The namespace's table, or undefined when the namespace was never created (an emptied one stays, as in Java). */
  getNamespace(namespace: string): ReadonlyMap<string, string> | undefined {
    return this.configTable.get(namespace);
  }

  /** Resolves once the change is on disk. */
  put(namespace: string, key: string, value: string): Promise<void> {
    let ns = this.configTable.get(namespace);
    if (!ns) {
      ns = new Map();
      this.configTable.set(namespace, ns);
    }
    ns.set(key, value);
    this.logger.info({ namespace, key, value }, 'KV config put');
    return this.persist();
  }

  delete(namespace: string, key: string): Promise<void> {
    const ns = this.configTable.get(namespace);
    if (ns?.delete(key)) this.logger.info({ namespace, key }, 'KV config deleted');
    return this.persist();
  }

  /** Writes the current table; writes are serialised so the file always ends with the latest state. */
  persist(): Promise<void> {
    const next = this.persistChain.then(() => this.writeNow());
    this.persistChain = next.catch(() => undefined);
    return next;
  }

  private async writeNow(): Promise<void> {
    const content = stringifyFastjson({ configTable: this.configTable }, { sortKeys: false });
    const dir = path.dirname(this.filePath);
    const tmp = `${this.filePath}.tmp`;
    await fs.promises.mkdir(dir, { recursive: true });
    const fh = await fs.promises.open(tmp, 'w');
    try {
      await fh.writeFile(content, 'utf8');
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fs.promises.rename(tmp, this.filePath);
  }

  /** Waits for pending writes (shutdown). */
  async flush(): Promise<void> {
    await this.persistChain;
  }
}
