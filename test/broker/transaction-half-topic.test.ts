// A store handed over with half messages but without the half topic in topics.json (an official 4.9.8 broker
// killed before it saved the topic it had created; compat/store-compat.mjs --unclean): the check pass must still
// find the half queue, as Java's TransactionalMessageBridge.selectTopicConfig creates the config on the fly.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TopicConfigManager } from '../../src/broker/topic/topic-config-manager.js';
import { TransactionalMessageService } from '../../src/broker/transaction/transactional-message-service.js';
import type { ConsumerOffsetManager } from '../../src/broker/offset/consumer-offset-manager.js';
import { BROKER_SCHEMA, defaults } from '../../src/common/config.js';
import { silentLogger } from '../../src/common/logger.js';
import type { MessageStore } from '../../src/store/types.js';
import { tempDir } from '../helpers/server.js';

const HALF = 'RMQ_SYS_TRANS_HALF_TOPIC';

function service(halfQueuesInStore: number[]) {
  const dir = tempDir('tx-half-topic');
  const config = { ...defaults(BROKER_SCHEMA), storePathRootDir: dir };
  const topics = new TopicConfigManager(config, silentLogger());
  topics.load();
  const store = { getQueueIds: (t: string) => (t === HALF ? halfQueuesInStore : []) } as unknown as MessageStore;
  const tx = new TransactionalMessageService({
    config, store, topicConfigManager: topics, consumerOffsetManager: {} as ConsumerOffsetManager,
    brokerAddr: () => '127.0.0.1:10911', logger: silentLogger(),
  });
  return { tx, topics, cleanup: async () => { await topics.saved(); fs.rmSync(dir, { recursive: true, force: true }); } };
}

describe('half queues to check', () => {
  it('creates the half topic config when the store holds half messages but topics.json does not know the topic', async () => {
    const { tx, topics, cleanup } = service([0]);
    try {
      expect(topics.get(HALF)).toBeUndefined();
      expect(tx.halfQueueIds()).toEqual([0]);
      expect(topics.get(HALF)?.readQueueNums).toBe(1);
    } finally {
      await cleanup();
    }
  });

  it('creates nothing on a broker that never stored a half message', async () => {
    const { tx, topics, cleanup } = service([]);
    try {
      expect(tx.halfQueueIds()).toEqual([]);
      expect(topics.get(HALF)).toBeUndefined();
    } finally {
      await cleanup();
    }
  });
});
