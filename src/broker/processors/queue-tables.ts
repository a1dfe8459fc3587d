// Admin answers with an entry per queue (topic stats, consume stats, consume time spans, the broker-wide consume
// stats). A topic may have up to MAX_TOPIC_QUEUE_NUMS (16,384) queues, and building such an answer in one piece
// held the event loop, and with it every client of the broker, for 100–300 ms (a 16,384-queue topic: topic stats
// 1.8 MB, consume time spans 4.8 MB of text). Java builds them on its admin thread pool; here the gathering and the
// encoding give the loop a turn every QUEUES_PER_TURN entries. The text is the same as encoded in one piece.
import type { MessageQueue } from '../client/types.js';
import { stringifyFastjson } from '../../common/fastjson.js';

/** Queue entries gathered or encoded between two turns of the event loop. */
export const QUEUES_PER_TURN = 1_000;

const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Counts handled entries and yields to the event loop once every QUEUES_PER_TURN of them. */
export class Turns {
  private sinceYield = 0;

  async done(entries = 1): Promise<void> {
    this.sinceYield += entries;
    if (this.sinceYield >= QUEUES_PER_TURN) {
      this.sinceYield = 0;
      await yieldToLoop();
    }
  }
}

/** Encodes a MessageQueue-keyed table the way fastjson does (object keys in place; mqadmin/Go expect it). */
export function encodeMessageQueueTable(entries: Array<[MessageQueue, object]>, extra: Record<string, unknown> = {}): string {
  return stringifyFastjson({ ...extra, offsetTable: new Map(entries) });
}

/** The same text as encodeMessageQueueTable, encoded QUEUES_PER_TURN entries per turn of the event loop. */
export async function encodeMessageQueueTableInTurns(entries: Array<[MessageQueue, object]>, extra: Record<string, unknown> = {}): Promise<string> {
  if (entries.length <= QUEUES_PER_TURN) return encodeMessageQueueTable(entries, extra);
  const parts: string[] = [];
  for (let i = 0; i < entries.length; i += QUEUES_PER_TURN) {
    if (i > 0) await yieldToLoop();
    parts.push(stringifyFastjson(new Map(entries.slice(i, i + QUEUES_PER_TURN))).slice(1, -1));
  }
  // The frame with an empty table (its keys sorted as fastjson sorts them), the entries put inside it.
  const empty = '"offsetTable":{}';
  const frame = encodeMessageQueueTable([], extra);
  const at = frame.indexOf(empty);
  return `${frame.slice(0, at)}"offsetTable":{${parts.join(',')}}${frame.slice(at + empty.length)}`;
}

/** stringifyFastjson of an array, QUEUES_PER_TURN elements per turn of the event loop. */
export async function stringifyArrayInTurns(items: unknown[]): Promise<string> {
  const parts: string[] = [];
  for (let i = 0; i < items.length; i += QUEUES_PER_TURN) {
    if (i > 0) await yieldToLoop();
    parts.push(stringifyFastjson(items.slice(i, i + QUEUES_PER_TURN)).slice(1, -1));
  }
  return `[${parts.join(',')}]`;
}
