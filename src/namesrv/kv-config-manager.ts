import type { Logger } from 'pino';
import { fastjsonEntries, parseFastjson, stringifyFastjson } from '../common/fastjson.js';
import { TableFile } from '../common/table-file.js';

/** The KV config file exists but neither it nor its .bak can be read back: start-up fails rather than overwrite it. */
export class KvConfigLoadError extends Error {}

/**
 * Namespaced key/value config (Java: namesrv/kvconfig/KVConfigManager.java). Persisted after every change as
 * `{"configTable":{ns:{k:v}}}` through a TableFile (temp file, fsync, old file kept as `.bak`, rename, as Java's
 * MixAll.string2File); a missing or unreadable file falls back to the .bak.
 */
export class KvConfigManager {
  private readonly configTable = new Map<string, Map<string, string>>();
  private readonly file: TableFile;

  constructor(
    private readonly filePath: string,
    private readonly logger: Logger,
  ) {
    this.file = new TableFile(filePath, () => stringifyFastjson({ configTable: this.configTable }, { sortKeys: false }), logger, 'KV config');
  }

  /** Loads the file if it exists (Java: load() at start). */
  async load(): Promise<void> {
    const res = this.file.loadStrict(parseFastjson);
    if (res.status === 'missing') return;
    if (res.status === 'unreadable') throw new KvConfigLoadError(`cannot load KV config: ${res.reason}`);
    const table = fastjsonEntries(res.value).find(([k]) => k === 'configTable')?.[1];
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

  /** Writes the current table; saves run one at a time, so the file always ends with the latest state. */
  private persist(): Promise<void> {
    this.file.changed();
    return this.file.save();
  }

  /** Waits for pending writes (shutdown). */
  flush(): Promise<void> {
    return this.file.idle();
  }
}
