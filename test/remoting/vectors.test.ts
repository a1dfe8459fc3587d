import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseProperties } from '../../src/common/message-properties.js';
import { type RemotingCommand } from '../../src/remoting/command.js';
import { FrameDecoder } from '../../src/remoting/frame-decoder.js';
import { decodeBatchBody, readSendHeader } from '../../src/broker/processors/send-message.js';
import { decodeRecord } from '../../src/store/record.js';
import { parseFastjson } from '../../src/common/fastjson.js';

/** Frames captured from the stock Java 4.9.8 client and the official 4.9.8 servers (protocol/vectors/). */
const DIR = path.resolve(import.meta.dirname, '../../protocol/vectors');
const vectors = fs
  .readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .map((f) => ({ name: f, ...(JSON.parse(fs.readFileSync(path.join(DIR, f), 'utf8')) as { frameHex: string; source: string }) }));

function decodeWhole(hex: string): RemotingCommand {
  const out: RemotingCommand[] = [];
  new FrameDecoder().push(Buffer.from(hex, 'hex'), out);
  expect(out).toHaveLength(1);
  return out[0];
}

function vector(name: string): RemotingCommand {
  const v = vectors.find((x) => x.name === name);
  if (!v) throw new Error(`missing vector ${name}`);
  return decodeWhole(v.frameHex);
}

describe('captured vectors', () => {
  it('are present', () => {
    expect(vectors.length).toBeGreaterThanOrEqual(15);
  });

  for (const v of vectors) {
    it(`${v.name} decodes whole, and split at every 7th byte`, () => {
      const whole = decodeWhole(v.frameHex);
      const bytes = Buffer.from(v.frameHex, 'hex');
      const d = new FrameDecoder();
      const out: RemotingCommand[] = [];
      for (let i = 0; i < bytes.length; i += 7) d.push(bytes.subarray(i, i + 7), out);
      expect(out).toHaveLength(1);
      expect(out[0].code).toBe(whole.code);
      expect(out[0].opaque).toBe(whole.opaque);
      expect(out[0].extFields).toEqual(whole.extFields);
      expect(out[0].body?.equals(whole.body ?? Buffer.alloc(0)) ?? !whole.body).toBe(true);
    });
  }

  it('reads the Java SEND_MESSAGE_V2 letter header', () => {
    const req = vector('java-send-message-v2-request.json');
    expect(req.code).toBe(310);
    const h = readSendHeader(req);
    expect(h.topic).toMatch(/^ct_/);
    expect(h.defaultTopic).toBe('TBW102');
    expect(h.defaultTopicQueueNums).toBe(4);
    expect(parseProperties(h.properties).get('UNIQ_KEY')).toMatch(/^[0-9A-F]{32}$/);
  });

  it('reads the official send response fields the Java client needs', () => {
    const res = vector('java-send-message-v2-response.json');
    expect(res.flag & 1).toBe(1);
    expect(res.extFields.msgId).toMatch(/^[0-9A-F]{32}$/);
    expect(res.extFields).toHaveProperty('queueId');
    expect(res.extFields).toHaveProperty('queueOffset');
    expect(res.extFields.MSG_REGION).toBe('DefaultRegion');
  });

  it('decodes the Java batch body into inner messages with their own UNIQ_KEY', () => {
    const req = vector('java-send-batch-message-request.json');
    expect(req.code).toBe(320);
    const items = decodeBatchBody(req.body ?? Buffer.alloc(0));
    expect(Array.isArray(items)).toBe(true);
    const list = items as Exclude<typeof items, string>;
    expect(list.length).toBeGreaterThan(1);
    const keys = new Set(list.map((m) => parseProperties(m.properties).get('UNIQ_KEY')));
    expect(keys.size).toBe(list.length);
  });

  it('decodes the records of an official pull response body', () => {
    const res = vector('java-pull-message-response-found.json');
    expect(res.code).toBe(0);
    const body = res.body ?? Buffer.alloc(0);
    let pos = 0;
    let count = 0;
    while (pos < body.length) {
      const rec = decodeRecord(body, pos);
      expect(rec.queueOffset).toBeGreaterThanOrEqual(Number(res.extFields.minOffset));
      expect(rec.topic).toMatch(/^ct_/);
      pos += rec.totalSize;
      count++;
    }
    expect(count).toBeGreaterThan(0);
    expect(Number(res.extFields.nextBeginOffset)).toBeGreaterThan(0);
  });

  it('parses the official route body (standard JSON for a 4.9.4+ client)', () => {
    const res = vector('java-get-routeinfo-by-topic-response.json');
    const route = parseFastjson(res.body ?? Buffer.alloc(0)) as { brokerDatas: Array<{ brokerAddrs: Record<string, string> }>; queueDatas: unknown[] };
    expect(route.queueDatas.length).toBeGreaterThan(0);
    expect(Object.keys(route.brokerDatas[0].brokerAddrs)).toContain('0');
    expect(vector('java-get-routeinfo-by-topic-response-topic-not-exist.json').code).toBe(17);
  });

  it('parses the Java heartbeat body', () => {
    const req = vector('java-heart-beat-request.json');
    const hb = parseFastjson(req.body ?? Buffer.alloc(0)) as { clientID: string; consumerDataSet: unknown[]; producerDataSet: unknown[] };
    expect(hb.clientID).toContain('@');
    expect(Array.isArray(hb.producerDataSet)).toBe(true);
  });
});
