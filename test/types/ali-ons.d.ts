declare module 'ali-ons' {
  import { EventEmitter } from 'node:events';
  export class Message {
    constructor(topic: string, tags: string, body: string | Buffer);
    topic: string;
    tags: string;
    /** Getter returns the space-joined KEYS string; the setter takes an array. */
    get keys(): string;
    set keys(v: string[]);
    body: Buffer;
    msgId: string;
    queueId: number;
    queueOffset: number;
    reconsumeTimes: number;
    properties: Record<string, string>;
    delayTimeLevel: number;
  }
  export interface ClientOptions {
    httpclient: unknown;
    nameSrv: string | string[];
    accessKeyId?: string;
    accessKeySecret?: string;
    instanceName?: string;
    [key: string]: unknown;
  }
  export class Producer extends EventEmitter {
    constructor(options: ClientOptions & { producerGroup: string });
    ready(): Promise<void>;
    send(msg: Message, selector?: unknown, arg?: unknown): Promise<{ sendStatus: string; msgId: string; messageQueue: { topic: string; brokerName: string; queueId: number }; queueOffset: number }>;
    close(): Promise<void>;
  }
  export class Consumer extends EventEmitter {
    static ACTION_RETRY: symbol;
    constructor(options: ClientOptions & { consumerGroup: string; isBroadcast?: boolean; consumeFromWhere?: string; [key: string]: unknown });
    ready(): Promise<void>;
    subscribe(topic: string, expr: string, handler: (msg: Message) => Promise<unknown>): void;
    close(): Promise<void>;
    processQueueTable: Map<string, unknown>;
  }
}
