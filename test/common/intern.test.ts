// internString must give back the same text for every kind of name (the object it returns being the engine's one
// interned copy is not observable from JS; its effect is measured by the bench), and the topic table still keys
// and finds a config under its name once upsert has swapped the name for the interned copy.
import { describe, expect, it } from 'vitest';
import { internString } from '../../src/common/intern.js';
import { TopicConfigManager } from '../../src/broker/topic/topic-config-manager.js';
import { newTopicConfig } from '../../src/broker/topic/topic-config.js';
import { BROKER_SCHEMA, defaults } from '../../src/common/config.js';
import { silentLogger } from '../../src/common/logger.js';

/** A name as a request header gives it: a new string, sliced out of a longer text when it is 13 chars or more. */
function fromHeader(name: string): string {
  const text = `{"b":"${name}","c":"TBW102"}`;
  return /"b":"([^"]*)"/.exec(text)![1]!;
}

const NAMES = [
  'T', 'Bench_batch16', 'order-service-payment-events', 'ünïcödé-topic-名字', '%RETRY%group', '123', '4294967295', '-1',
  '', '__proto__', 'constructor', 'toString', 'a'.repeat(255),
];

describe('internString', () => {
  it('returns the same text for names of every kind', () => {
    for (const name of NAMES) {
      expect(internString(fromHeader(name))).toBe(name);
      expect(internString(Buffer.from(name).toString('utf8'))).toBe(name);
    }
  });

  it('the topic table keeps keying and finding configs by name', () => {
    const mgr = new TopicConfigManager({ ...defaults(BROKER_SCHEMA), storePathRootDir: '/nonexistent-intern-test' }, silentLogger());
    for (const name of NAMES.filter((n) => n !== '')) {
      mgr.upsert({ ...newTopicConfig('x', 4), topicName: fromHeader(name) }, { callerRegisters: true });
      expect(mgr.get(fromHeader(name))?.topicName).toBe(name);
      expect(newTopicConfig(fromHeader(name), 1).topicName).toBe(name);
    }
  });
});
