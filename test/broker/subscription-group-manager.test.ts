import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  BUILT_IN_GROUPS,
  SubscriptionGroupManager,
  encodeSubscriptionGroupConfig,
  newSubscriptionGroupConfig,
  parseSubscriptionGroupConfig,
  validateGroupName,
} from '../../src/broker/subscription/subscription-group-manager.js';
import { BROKER_SCHEMA, defaults } from '../../src/common/config.js';
import { parseFastjson } from '../../src/common/fastjson.js';
import { logger, tempDir } from './helpers.js';

function manager(overrides: Partial<ReturnType<typeof defaults<typeof BROKER_SCHEMA>>> = {}, dir = tempDir()) {
  const config = { ...defaults(BROKER_SCHEMA), storePathRootDir: dir, ...overrides };
  return { sgm: new SubscriptionGroupManager(config, logger), dir, file: path.join(dir, 'config', 'subscriptionGroup.json') };
}

describe('SubscriptionGroupManager', () => {
  it('has Java’s built-in groups with Java defaults', () => {
    const { sgm } = manager();
    for (const g of BUILT_IN_GROUPS) expect(sgm.get(g)?.groupName).toBe(g);
    expect(sgm.get('TOOLS_CONSUMER')).toEqual(newSubscriptionGroupConfig('TOOLS_CONSUMER'));
    const c = newSubscriptionGroupConfig('X');
    expect(c).toMatchObject({
      consumeEnable: true,
      consumeFromMinEnable: true,
      consumeBroadcastEnable: true,
      consumeMessageOrderly: false,
      retryQueueNums: 1,
      retryMaxTimes: 16,
      brokerId: 0,
      whichBrokerWhenConsumeSlowly: 1,
      notifyConsumerIdsChangedEnable: true,
      groupSysFlag: 0,
      consumeTimeoutMinute: 15,
    });
  });

  it('auto-creates groups, persists them in Java’s format and reloads them', async () => {
    const { sgm, dir, file } = manager();
    const before = sgm.dataVersion.counter;
    const g = sgm.findSubscriptionGroupConfig('GID_test');
    expect(g?.groupName).toBe('GID_test');
    expect(sgm.dataVersion.counter).toBe(before + 1);
    await sgm.saved(); // saved off the event loop
    const text = fs.readFileSync(file, 'utf8');
    const parsed = parseFastjson(text) as Record<string, Record<string, Record<string, unknown>>>;
    expect(Object.keys(parsed)).toEqual(['dataVersion', 'forbiddenTable', 'subscriptionGroupTable']);
    expect(parsed.subscriptionGroupTable.GID_test).toEqual({
      attributes: {},
      brokerId: 0,
      consumeBroadcastEnable: true,
      consumeEnable: true,
      consumeFromMinEnable: true,
      consumeMessageOrderly: false,
      consumeTimeoutMinute: 15,
      groupName: 'GID_test',
      groupRetryPolicy: { type: 'CUSTOMIZED' },
      groupSysFlag: 0,
      notifyConsumerIdsChangedEnable: true,
      retryMaxTimes: 16,
      retryQueueNums: 1,
      whichBrokerWhenConsumeSlowly: 1,
    });

    sgm.updateSubscriptionGroupConfig({ ...newSubscriptionGroupConfig('ORDER'), consumeMessageOrderly: true, retryMaxTimes: 3 });
    await sgm.saved();
    const { sgm: again } = manager({}, dir);
    again.load();
    expect(again.get('GID_test')?.groupName).toBe('GID_test');
    expect(again.get('ORDER')).toMatchObject({ consumeMessageOrderly: true, retryMaxTimes: 3 });
    expect(again.dataVersion.counter).toBe(sgm.dataVersion.counter);

    expect(again.deleteSubscriptionGroupConfig('ORDER')).toBe(true);
    expect(again.deleteSubscriptionGroupConfig('ORDER')).toBe(false);
    await again.saved();
    const { sgm: third } = manager({}, dir);
    third.load();
    expect(third.get('ORDER')).toBeUndefined();
  });

  it('loads a Java 4.9.x file (no forbiddenTable, groupRetryPolicy absent, pretty-printed)', () => {
    const { sgm, file } = manager();
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(
      file,
      `{
	"dataVersion":{
		"counter":7,
		"timestamp":1700000000000
	},
	"subscriptionGroupTable":{
		"G1":{
			"brokerId":0,
			"consumeBroadcastEnable":false,
			"consumeEnable":true,
			"consumeFromMinEnable":true,
			"consumeMessageOrderly":false,
			"groupName":"G1",
			"notifyConsumerIdsChangedEnable":false,
			"retryMaxTimes":5,
			"retryQueueNums":2,
			"whichBrokerWhenConsumeSlowly":1
		}
	}
}`,
    );
    sgm.load();
    expect(sgm.get('G1')).toMatchObject({ consumeBroadcastEnable: false, notifyConsumerIdsChangedEnable: false, retryMaxTimes: 5, retryQueueNums: 2 });
    expect(sgm.dataVersion.counter).toBe(7);
    expect(sgm.get('TOOLS_CONSUMER')).toBeDefined();
  });

  it('does not auto-create when disabled, except CID_RMQ_SYS_ groups, and never invalid names', () => {
    const { sgm } = manager({ autoCreateSubscriptionGroup: false });
    expect(sgm.findSubscriptionGroupConfig('G')).toBeUndefined();
    expect(sgm.findSubscriptionGroupConfig('CID_RMQ_SYS_X')?.groupName).toBe('CID_RMQ_SYS_X');
    const { sgm: auto } = manager();
    expect(auto.findSubscriptionGroupConfig('bad group!')).toBeUndefined();
    expect(auto.findSubscriptionGroupConfig('x'.repeat(121))).toBeUndefined();
  });

  it('validates group names like Java TopicValidator.validateGroup', () => {
    expect(validateGroupName('GID_a-b|c%d')).toBeUndefined();
    expect(validateGroupName('')).toBe('The specified group is blank.');
    expect(validateGroupName('a b')).toMatch(/illegal characters/);
    expect(validateGroupName('x'.repeat(121))).toMatch(/longer than group max length: 120/);
  });

  it('parses configs leniently and rejects unusable values naming the field', () => {
    const c = parseSubscriptionGroupConfig({ groupName: 'G', retryQueueNums: '3', consumeEnable: 'false', unknown: 1 });
    expect(c).toMatchObject({ groupName: 'G', retryQueueNums: 3, consumeEnable: false, retryMaxTimes: 16 });
    expect(() => parseSubscriptionGroupConfig({ groupName: 'G', retryQueueNums: 'many' })).toThrow(/retryQueueNums/);
    expect(() => parseSubscriptionGroupConfig({ retryQueueNums: 1 })).toThrow(/groupName/);
    expect(() => parseSubscriptionGroupConfig([1])).toThrow(/object/);
    expect(encodeSubscriptionGroupConfig(newSubscriptionGroupConfig('G'))).toBe(
      '{"attributes":{},"brokerId":0,"consumeBroadcastEnable":true,"consumeEnable":true,"consumeFromMinEnable":true,' +
        '"consumeMessageOrderly":false,"consumeTimeoutMinute":15,"groupName":"G","groupRetryPolicy":{"type":"CUSTOMIZED"},' +
        '"groupSysFlag":0,"notifyConsumerIdsChangedEnable":true,"retryMaxTimes":16,"retryQueueNums":1,"whichBrokerWhenConsumeSlowly":1}',
    );
  });
});
