// The message store's contract with the broker. The store knows nothing about remoting.
// Java counterparts: store/MessageStore.java, PutMessageStatus, GetMessageStatus.
import type { StoreConfig } from './config.js';

/** An IPv4 (4 bytes) or IPv6 (16 bytes) address with a port, as written into BORNHOST / STOREHOST. */
export interface HostAddress {
  ip: Buffer;
  port: number;
}

/** One message as the broker hands it to the store (MessageExtBrokerInner). */
export interface MessageToStore {
  topic: string;
  queueId: number;
  flag: number;
  /** The body; unused (empty) when bodyParts is given. */
  body: Buffer;
  /** The body as pieces, in order (a request cut by socket chunks): CRC'd and copied into the record as they are. */
  bodyParts?: readonly Buffer[];
  /** Encoded property string (`k\x01v\x02...`), exactly as it will be stored. */
  propertiesString: string;
  /** Java String.hashCode of TAGS (sign-extended), 0 when no tags; for SCHEDULE_TOPIC_XXXX the due time. */
  tagsCode: number;
  /**
   * Space-separated KEYS property and UNIQ_KEY, for the index. When both are undefined the store reads them
   * from propertiesString.
   */
  keys?: string;
  uniqKey?: string;
  sysFlag: number;
  bornTimestamp: number;
  bornHost: HostAddress;
  storeHost: HostAddress;
  reconsumeTimes: number;
  preparedTransactionOffset: number;
  /**
   * Java isWaitStoreMsgOK (the WAIT property; absent = true): false answers the put once written, without waiting
   * for SYNC_FLUSH's fdatasync or SYNC_MASTER's slave ack. For a batch, the first message's value counts.
   */
  waitStoreMsgOK?: boolean;
}

export type PutStatus =
  | 'PUT_OK'
  | 'FLUSH_DISK_TIMEOUT'
  | 'FLUSH_SLAVE_TIMEOUT'
  | 'SLAVE_NOT_AVAILABLE'
  | 'SERVICE_NOT_AVAILABLE'
  | 'CREATE_MAPPED_FILE_FAILED'
  | 'MESSAGE_ILLEGAL'
  | 'PROPERTIES_SIZE_EXCEEDED'
  | 'OS_PAGE_CACHE_BUSY'
  /** 5.3.3 DLedgerCommitLog: the quorum did not acknowledge in time (WAIT_QUORUM_ACK_TIMEOUT). */
  | 'IN_SYNC_REPLICAS_NOT_ENOUGH'
  | 'UNKNOWN_ERROR';

export interface PutResult {
  status: PutStatus;
  /** Physical offset of the first record written (for a batch, of the first inner message). */
  commitLogOffset: number;
  /** Physical offsets of every record written (one for a single message). */
  commitLogOffsets: number[];
  /** Logical (consume-queue) offset of the first message. */
  queueOffset: number;
  wroteBytes: number;
  storeTimestamp: number;
  messageCount: number;
  remark?: string;
}

export type GetStatus =
  | 'FOUND'
  | 'NO_MATCHED_MESSAGE'
  | 'MESSAGE_WAS_REMOVING'
  | 'OFFSET_FOUND_NULL'
  | 'OFFSET_OVERFLOW_BADLY'
  | 'OFFSET_OVERFLOW_ONE'
  | 'OFFSET_TOO_SMALL'
  | 'NO_MATCHED_LOGIC_QUEUE'
  | 'NO_MESSAGE_IN_QUEUE';

export interface GetResult {
  status: GetStatus;
  nextBeginOffset: number;
  minOffset: number;
  maxOffset: number;
  /** Whole stored records, byte-for-byte, in queue order (views or copies). */
  records: Buffer[];
  totalBytes: number;
  /**
   * The last consume-queue entry looked at lies further behind the log's end than accessMessageInMemoryMaxRatio % of
   * RAM (Java GetMessageResult.suggestPullingFromSlave); false when no entry was looked at.
   */
  suggestPullingFromSlave: boolean;
  /**
   * Set when some records are views of the commit log's memory: release once they are no longer used (a pull:
   * after its response is written) so that memory can be reused. Not releasing is safe; it only costs the reuse.
   */
  pins?: { release(): void };
}

/**
 * What a read delivers (Java store/MessageFilter.java, built by the broker from a subscription). getMessage asks
 * the consume-queue check for every entry it scans and the commit-log check for every record that passed it;
 * records either check rejects are skipped and do not count against the pull's message and byte limits. A check
 * left out passes everything (and costs nothing).
 */
export interface MessageFilter {
  /** From the consume-queue entry alone: its tagsCode (Java isMatchedByConsumeQueue; tag hashes). */
  isMatchedByConsumeQueue?: (tagsCode: number) => boolean;
  /**
   * From the stored record and its property string (Java isMatchedByCommitLog; SQL92). A record whose
   * properties cannot be read is delivered without asking.
   */
  isMatchedByCommitLog?: (record: Buffer, propertiesString: string) => boolean;
  /**
   * The same check as isMatchedByCommitLog, asked instead of it (which must then be set too): given where the
   * record's properties lie in it (bytes [start, end), UTF-8 `name\x01value\x02...`) rather than the decoded
   * string, so a filter can look up just the properties it reads.
   */
  isMatchedByPropertyBytes?: (record: Buffer, start: number, end: number) => boolean;
}

export interface DispatchedEntry {
  topic: string;
  queueId: number;
  queueOffset: number;
  commitLogOffset: number;
  sizeBytes: number;
  tagsCode: number;
  storeTimestamp: number;
  /** The record's properties (long polling re-checks SQL92 filters on arrival, as Java's notifyMessageArriving). */
  propertiesString?: string;
}

/** One raw consume-queue entry (20 bytes on disk), with its logical offset. */
export interface QueueEntry {
  queueOffset: number;
  commitLogOffset: number;
  /** Record size; Integer.MAX_VALUE for the placeholders Java writes before a queue's first entry. */
  sizeBytes: number;
  tagsCode: number;
}

/** Answer of a key query (QUERY_MESSAGE). */
export interface QueryMessageResult {
  /** Whole stored records, byte-for-byte, oldest first (the client filters out hash collisions). */
  records: Buffer[];
  /** endTimestamp / endPhyOffset of the newest index file (0 when nothing matched). */
  indexLastUpdateTimestamp: number;
  indexLastUpdatePhyoffset: number;
}

export interface MessageStore {
  start(): Promise<void>;
  /** Flushes everything and closes files; a later start() sees every message. */
  shutdown(): Promise<void>;

  putMessage(msg: MessageToStore): Promise<PutResult>;
  /** Stores several messages of one topic/queue as consecutive records and queue offsets (SEND_BATCH_MESSAGE). */
  putMessages(msgs: MessageToStore[]): Promise<PutResult>;

  /**
   * Up to maxMsgNums records from queueOffset (DefaultMessageStore.getMessage). With a filter the read scans a
   * window of maxFilterMessageSize bytes of consume queue past rejected messages; when none matched the answer is
   * NO_MATCHED_MESSAGE with nextBeginOffset past the scanned entries.
   */
  getMessage(
    topic: string,
    queueId: number,
    queueOffset: number,
    maxMsgNums: number,
    maxTotalBytes: number,
    filter?: MessageFilter,
  ): Promise<GetResult>;

  getMaxOffsetInQueue(topic: string, queueId: number): number;
  getMinOffsetInQueue(topic: string, queueId: number): number;
  /** Commit-log offset of the entry at queueOffset, or -1. */
  getCommitLogOffsetInQueue(topic: string, queueId: number, queueOffset: number): Promise<number>;
  /** First queue offset whose store time is >= timestampMs (Java LOWER boundary); max offset if none. */
  getOffsetInQueueByTime(topic: string, queueId: number, timestampMs: number): Promise<number>;
  /** Store time of the earliest message in the queue, or -1. */
  getEarliestMessageTime(topic: string, queueId: number): Promise<number>;
  /** Store time of the oldest record in the commit log, -1 when it is empty. */
  getCommitLogEarliestTime(): Promise<number>;
  /** Bytes written to the commit log and not yet flushed. */
  flushBehindBytes(): number;
  /** Bytes written to the commit log whose records are not yet in the consume queues. */
  dispatchBehindBytes(): number;
  /** Store time of the message at the given queue offset, or -1. */
  getMessageStoreTimestamp(topic: string, queueId: number, queueOffset: number): Promise<number>;
  /** The whole stored record at a commit-log offset, or null. */
  lookMessageByOffset(commitLogOffset: number): Promise<Buffer | null>;
  /**
   * Up to maxCount consume-queue entries from fromOffset (raised to the queue's min), in offset order, without
   * touching the commit log. Offsets whose consume-queue file is unreadable are skipped, so the result may have
   * gaps; empty at or beyond the max offset.
   */
  getQueueEntries(topic: string, queueId: number, fromOffset: number, maxCount: number): Promise<QueueEntry[]>;
  /**
   * Messages of `topic` whose KEYS contain `key` or whose UNIQ_KEY is `key`, stored within
   * [beginTimestampMs, endTimestampMs], from the index (Java DefaultMessageStore.queryMessage). At most
   * min(maxNum, maxMsgsNumBatch) records; may include other keys with the same hash.
   */
  queryMessage(
    topic: string, key: string, maxNum: number, beginTimestampMs: number, endTimestampMs: number,
  ): Promise<QueryMessageResult>;

  getMinPhyOffset(): number;
  getMaxPhyOffset(): number;
  /** Queue ids of a topic that exist in the store. */
  getQueueIds(topic: string): number[];
  /** Removes a topic's consume queues (DELETE_TOPIC_IN_BROKER). */
  deleteTopic(topic: string): Promise<void>;
  /** Topics that have consume queues in the store. */
  getQueueTopics(): string[];
  /**
   * Java cleanExpiredConsumerQueue (CLEAN_EXPIRED_CONSUMEQUEUE): removes every queue whose entries all point below
   * the commit log's first offset (its next message then takes queue offset 0), except the delay levels' queues.
   * Returns the queues removed as `topic@queueId`.
   */
  cleanExpiredConsumeQueues(): Promise<string[]>;
  /** Java executeDeleteFilesManually (DELETE_EXPIRED_COMMITLOG): the next clean-up runs delete expired files now. */
  executeDeleteFilesManually(): void;

  /** Called after each record is dispatched to its consume queue (wakes long polls). */
  onDispatch(listener: (entry: DispatchedEntry) => void): void;

  /**
   * Applies settings changed at run time (keys marked `live` in STORE_SCHEMA); throws ConfigError, changing
   * nothing, for another key or a bad value.
   */
  updateConfig(changes: Partial<StoreConfig>): void;
}
