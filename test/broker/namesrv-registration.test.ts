import { describe, expect, it } from 'vitest';
import { NamesrvRegistration } from '../../src/broker/namesrv-registration.js';
import { newTopicConfig } from '../../src/broker/topic/topic-config.js';
import { TopicConfigManager } from '../../src/broker/topic/topic-config-manager.js';
import { BROKER_SCHEMA, type BrokerConfig, defaults } from '../../src/common/config.js';
import { type RemotingCommand, createResponse } from '../../src/remoting/command.js';
import type { RemotingClient } from '../../src/remoting/client.js';
import { logger, tempDir } from './helpers.js';

interface Sent {
  topics: string[];
  counter: number;
  answer: () => void;
}

/** A nameserver link that records each REGISTER_BROKER body and answers when the test says so. */
function recordingClient(sent: Sent[]): RemotingClient {
  return {
    request(_addr: string, req: RemotingCommand): Promise<RemotingCommand> {
      const body = JSON.parse(req.body!.toString('utf8'));
      const w = body.topicConfigSerializeWrapper;
      return new Promise((resolve) => {
        sent.push({ topics: Object.keys(w.topicConfigTable).sort(), counter: w.dataVersion.counter, answer: () => resolve(createResponse(0)) });
      });
    },
    oneway: async () => undefined,
  } as unknown as RemotingClient;
}

const settle = () => new Promise((r) => setImmediate(r));

describe('NamesrvRegistration', () => {
  it('a created topic registers alone, with the data version of its change, behind the registration in flight', async () => {
    const config: BrokerConfig = { ...defaults(BROKER_SCHEMA), brokerName: 'broker-a', storePathRootDir: tempDir('reg'), namesrvAddr: '127.0.0.1:1' };
    const sent: Sent[] = [];
    let registration: NamesrvRegistration | undefined;
    const topics = new TopicConfigManager(config, logger, () => void registration?.registerAll());
    topics.load();
    registration = new NamesrvRegistration(config, recordingClient(sent), topics, () => '127.0.0.1:10911', logger);

    const full = registration.registerAll(); // in flight until answered
    await settle();
    expect(sent).toHaveLength(1);

    topics.upsert(newTopicConfig('AdminCreated', 4), { callerRegisters: true });
    const versionOfA = topics.dataVersion.counter;
    const incremental = registration.registerTopic(topics.get('AdminCreated')!);
    topics.upsert(newTopicConfig('AutoCreated', 4)); // asks for a full registration itself
    await settle();
    expect(sent).toHaveLength(1); // both wait for the one in flight

    sent[0]!.answer();
    await full;
    await settle();
    expect(sent[1]!.topics).toEqual(['AdminCreated']);
    // the version of its own change: the full registration after it, carrying AutoCreated, must look newer
    expect(sent[1]!.counter).toBe(versionOfA);
    sent[1]!.answer();
    await incremental;
    await settle();
    expect(sent[2]!.topics).toContain('AutoCreated');
    expect(sent[2]!.counter).toBeGreaterThan(versionOfA);
    sent[2]!.answer();
  });

  it('registers every topic with brokerPermission while the broker is not both readable and writable', async () => {
    const config: BrokerConfig = { ...defaults(BROKER_SCHEMA), brokerName: 'broker-a', storePathRootDir: tempDir('reg'), namesrvAddr: '127.0.0.1:1', brokerPermission: 4 };
    const sent: Array<Record<string, { perm: number; readQueueNums: number; writeQueueNums: number }>> = [];
    const client = {
      request: async (_a: string, req: RemotingCommand) => {
        sent.push(JSON.parse(req.body!.toString('utf8')).topicConfigSerializeWrapper.topicConfigTable);
        return createResponse(0);
      },
      oneway: async () => undefined,
    } as unknown as RemotingClient;
    const topics = new TopicConfigManager(config, logger);
    topics.load();
    topics.upsert({ ...newTopicConfig('T', 8), writeQueueNums: 2 });
    const registration = new NamesrvRegistration(config, client, topics, () => '127.0.0.1:10911', logger);
    await registration.registerAll();
    expect(sent[0]!.T).toMatchObject({ perm: 4, readQueueNums: 8, writeQueueNums: 2 });
    await registration.registerTopic(topics.get('T')!);
    expect(sent[1]).toEqual({ T: expect.objectContaining({ perm: 4, readQueueNums: 8, writeQueueNums: 2 }) });
  });
});
