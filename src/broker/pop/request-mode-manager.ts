// How a (topic, group) consumes: PULL (client-side rebalance) or POP (broker-side assignment), set by
// SET_MESSAGE_REQUEST_MODE (mqadmin setConsumeMode) and read by QUERY_ASSIGNMENT (Java
// broker/loadbalance/MessageRequestModeManager.java). Persisted as config/messageRequestMode.json, Java's layout:
// {"messageRequestModeMap":{"<topic>":{"<group>":{"consumerGroup":…,"mode":"POP","popShareQueueNum":0,"topic":…}}}}
import path from 'node:path';
import { stringifyFastjson } from '../../common/fastjson.js';
import type { Logger } from '../../common/logger.js';
import { TableFile } from '../../common/table-file.js';

export type MessageRequestMode = 'PULL' | 'POP';

/** SetMessageRequestModeRequestBody */
export interface RequestModeEntry {
  topic: string;
  consumerGroup: string;
  mode: MessageRequestMode;
  /** How many other clients' queues a POP client also pops (0: only the assignment… see allocate4Pop). */
  popShareQueueNum: number;
}

export function isRequestMode(v: unknown): v is MessageRequestMode {
  return v === 'PULL' || v === 'POP';
}

export class MessageRequestModeManager {
  private readonly map = new Map<string, Map<string, RequestModeEntry>>();
  private readonly file: TableFile;

  constructor(storePathRootDir: string, logger: Logger) {
    this.file = new TableFile(path.join(storePathRootDir, 'config', 'messageRequestMode.json'), () => this.encode(), logger, 'message request modes');
  }

  get(topic: string, group: string): RequestModeEntry | undefined {
    return this.map.get(topic)?.get(group);
  }

  /** Stores and saves (Java persists after every SET_MESSAGE_REQUEST_MODE). */
  set(entry: RequestModeEntry): void {
    let groups = this.map.get(entry.topic);
    if (!groups) {
      groups = new Map();
      this.map.set(entry.topic, groups);
    }
    groups.set(entry.consumerGroup, entry);
    this.file.request();
  }

  encode(): string {
    const out = new Map<string, Map<string, RequestModeEntry>>();
    for (const [topic, groups] of this.map) out.set(topic, new Map(groups));
    return stringifyFastjson({ messageRequestModeMap: out });
  }

  load(): void {
    const data = this.file.load() as { messageRequestModeMap?: Record<string, Record<string, Record<string, unknown>>> } | undefined;
    for (const [topic, groups] of Object.entries(data?.messageRequestModeMap ?? {})) {
      if (!groups || typeof groups !== 'object') continue;
      for (const [group, raw] of Object.entries(groups)) {
        if (!raw || typeof raw !== 'object' || !isRequestMode(raw.mode)) continue;
        this.set0({ topic, consumerGroup: group, mode: raw.mode, popShareQueueNum: Number(raw.popShareQueueNum ?? 0) || 0 });
      }
    }
  }

  private set0(entry: RequestModeEntry): void {
    let groups = this.map.get(entry.topic);
    if (!groups) {
      groups = new Map();
      this.map.set(entry.topic, groups);
    }
    groups.set(entry.consumerGroup, entry);
  }

  saved(): Promise<void> {
    return this.file.close(true);
  }
}
