// One store schema inside the broker's, and UPDATE_BROKER_CONFIG reaching the store of a real broker: a change
// takes effect where the key is used, or is refused with a remark naming the key.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROKER_SCHEMA, defaults } from '../../src/common/config.js';
import { silentLogger } from '../../src/common/logger.js';
import { RequestCode } from '../../src/common/request-code.js';
import { ResponseCode } from '../../src/common/response-code.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { createRequest } from '../../src/remoting/command.js';
import { type DefaultMessageStore, STORE_CONFIG_DEFAULTS, STORE_SCHEMA } from '../../src/store/index.js';
import { rawPull, rawSend } from '../durability/helpers.js';
import { type TestServer, createTopic, startTestServer } from '../helpers/server.js';

const TOPIC = 'RuntimeConfigTopic';

/** Java 5.3.3 MessageStoreConfig defaults of the keys broker.conf could not set before the schemas were merged. */
const JAVA_DEFAULTS: Record<string, number | boolean> = {
  flushCommitLogThoroughInterval: 10000,
  checkCRCOnRecover: true,
  maxTransferBytesOnMessageInDisk: 65536,
  maxTransferCountOnMessageInDisk: 8,
  accessMessageInMemoryMaxRatio: 40,
  maxFilterMessageSize: 16000,
  deleteCommitLogFilesInterval: 100,
  deleteConsumeQueueFilesInterval: 100,
  destroyMapedFileIntervalForcibly: 120000,
  deleteFileBatchMax: 10,
};

describe('one store schema', () => {
  it('the broker schema holds every store key with the same spec, and the store defaults come from it', () => {
    for (const [key, spec] of Object.entries(STORE_SCHEMA)) {
      expect((BROKER_SCHEMA as Record<string, unknown>)[key], key).toBe(spec);
      expect((STORE_CONFIG_DEFAULTS as Record<string, unknown>)[key], key).toBe(spec.default);
    }
    const broker = defaults(BROKER_SCHEMA) as Record<string, unknown>;
    for (const [key, value] of Object.entries(JAVA_DEFAULTS)) expect(broker[key], key).toBe(value);
  });
});

describe('the README config table', () => {
  it('lists every broker.conf key with its live flag', () => {
    const readme = fs.readFileSync(path.resolve(import.meta.dirname, '../../README.md'), 'utf8');
    const documented = new Map<string, boolean>();
    for (const line of readme.split('\n')) {
      const cells = line.split('|').map((c) => c.trim());
      if (cells.length < 6 || !cells[1].startsWith('`')) continue;
      const keys = [...cells[1].matchAll(/`([\w.]+)`/g)].map((m) => m[1]);
      const live = cells[3].split('/').map((c) => c.trim() === 'live');
      keys.forEach((k, i) => documented.set(k, live.length === 1 ? live[0] : live[i]));
    }
    for (const [key, spec] of Object.entries(BROKER_SCHEMA)) {
      expect(documented.has(key), `README lacks ${key}`).toBe(true);
      expect(documented.get(key), `README live flag of ${key}`).toBe('live' in spec && spec.live === true);
    }
  });
});

describe('UPDATE_BROKER_CONFIG on a running broker', () => {
  let server: TestServer;
  let client: RemotingClient;
  let store: DefaultMessageStore;

  const update = (text: string) => client.request(server.brokerAddr, createRequest(RequestCode.UPDATE_BROKER_CONFIG, {}, Buffer.from(text)), 10_000);

  beforeAll(async () => {
    // Keys broker.conf could not set before reach the store through the broker.
    server = await startTestServer({ maxMessageSize: 2048, deleteFileBatchMax: 3, maxFilterMessageSize: 4000, checkCRCOnRecover: false });
    store = server.broker.context.store as DefaultMessageStore;
    client = new RemotingClient(silentLogger());
    await createTopic(server, TOPIC, 1);
  });

  afterAll(async () => {
    await client?.close();
    await server?.stop();
  });

  it('the store starts with the broker config keys', () => {
    expect(store.config).toMatchObject({ maxMessageSize: 2048, deleteFileBatchMax: 3, maxFilterMessageSize: 4000, checkCRCOnRecover: false });
  });

  it('a raised maxMessageSize lets a larger message through the broker and the store, and it reads back', async () => {
    const body = Buffer.alloc(6000, 'm');
    const refused = await rawSend(client, server.brokerAddr, TOPIC, 0, body);
    expect(refused.code).toBe(ResponseCode.MESSAGE_ILLEGAL);

    const res = await update('maxMessageSize=8192\n');
    expect(res.code).toBe(ResponseCode.SUCCESS);
    expect(store.config.maxMessageSize).toBe(8192);
    const sent = await rawSend(client, server.brokerAddr, TOPIC, 0, body);
    expect(sent.code, sent.remark).toBe(ResponseCode.SUCCESS);
    const pulled = await rawPull(client, server.brokerAddr, TOPIC, 0, 0);
    expect(pulled.messages.map((m) => m.body.length)).toEqual([6000]);

    // Lowered again: new large sends are refused, the stored one still reads.
    expect((await update('maxMessageSize=2048\n')).code).toBe(ResponseCode.SUCCESS);
    expect((await rawSend(client, server.brokerAddr, TOPIC, 0, body)).code).toBe(ResponseCode.MESSAGE_ILLEGAL);
    expect((await rawPull(client, server.brokerAddr, TOPIC, 0, 0)).messages.map((m) => m.body.length)).toEqual([6000]);
  });

  it('retention keys reach the clean-up: deleteWhen hours are parsed again, the rest read live', async () => {
    const at = (hour: number) => {
      const d = new Date();
      d.setHours(hour, 30, 0, 0);
      return d.getTime();
    };
    const env = store.cleaner.env;
    try {
      store.cleaner.env = { ...env, now: () => at(13) };
      expect(store.cleaner.isTimeToDelete()).toBe(false);
      const res = await update('deleteWhen=02;13\nfileReservedTime=5\ndiskMaxUsedSpaceRatio=60\ndiskSpaceWarningLevelRatio=80\n');
      expect(res.code, res.remark).toBe(ResponseCode.SUCCESS);
      expect(store.cleaner.isTimeToDelete()).toBe(true);
      expect(store.config).toMatchObject({ fileReservedTime: 5, diskMaxUsedSpaceRatio: 60 });
      expect(store.cleaner.maxUsedRatio).toBe(0.6);
      expect(store.cleaner.warningRatio).toBe(0.8);
      expect(server.broker.context.config).toMatchObject({ deleteWhen: '02;13', fileReservedTime: 5 });
    } finally {
      store.cleaner.env = env;
    }
  });

  it('a bad value changes nothing and names the key', async () => {
    const res = await update('fileReservedTime=9\ndeleteWhen=25\n');
    expect(res.code).toBe(ResponseCode.INVALID_PARAMETER);
    expect(res.remark).toMatch(/deleteWhen: bad hour "25"/);
    expect(store.config.fileReservedTime).toBe(5);
    expect(server.broker.context.config.fileReservedTime).toBe(5);
  });

  it('keys read only at start are refused with a remark naming them, unless unchanged', async () => {
    const res = await update('flushIntervalCommitLog=100\nmappedFileSizeCommitLog=8192\nfileReservedTime=7\n');
    expect(res.code).toBe(ResponseCode.INVALID_PARAMETER);
    expect(res.remark).toBe('flushIntervalCommitLog, mappedFileSizeCommitLog cannot be changed on a running broker; edit broker.conf and restart');
    expect(store.config.fileReservedTime).toBe(5);
    expect(store.config.flushIntervalCommitLog).toBe(500);

    const same = await update(`mappedFileSizeCommitLog=${server.broker.context.config.mappedFileSizeCommitLog}\nfileReservedTime=7\n`);
    expect(same.code).toBe(ResponseCode.SUCCESS);
    expect(store.config.fileReservedTime).toBe(7);

    const black = await update('configBlackList=x\n');
    expect([black.code, black.remark]).toEqual([ResponseCode.NO_PERMISSION, 'Can not update config in black list.']);
  });

  it('every key is either live or refused: no key is accepted and then ignored', () => {
    // The keys whose users read them once at start, checked by hand against the code that uses them.
    const restartOnly = Object.entries(BROKER_SCHEMA).filter(([, spec]) => !('live' in spec && spec.live)).map(([k]) => k).sort();
    expect(restartOnly).toEqual([
      'aclEnable', 'adminWebHost', 'adminWebPort', 'authConfigPath', 'authenticationEnabled',
      'authenticationWhitelist', 'authorizationEnabled', 'authorizationWhitelist', 'brokerClusterName', 'brokerIP1',
      'brokerIP2', 'brokerId', 'brokerName', 'brokerRole', 'brokerTopicEnable', 'checkCRCOnRecover',
      'cleanResourceInterval', 'clusterTopicEnable', 'commitLogTailCacheBytes', 'consumeQueueTailCacheEntries',
      'dLegerGroup', 'dLegerPeers', 'dLegerSelfId', 'defaultInvisibleTimeMills', 'defaultTopicQueueNums', 'enableBatchPush', 'enableDLegerCommitLog', 'enableProxyAutoRenew', 'enableTopicMessageTypeCheck',
      'fastListenPort', 'flushConsumerOffsetInterval', 'flushDiskType', 'flushIntervalCommitLog',
      'flushIntervalConsumeQueue', 'grpcClientConsumerLongPollingBatchSize',
      'grpcClientConsumerMaxLongPollingTimeoutMillis', 'grpcClientConsumerMinLongPollingTimeoutMillis',
      'grpcClientIdleTimeMills', 'grpcClientProducerBackoffInitialMillis', 'grpcClientProducerBackoffMaxMillis',
      'grpcClientProducerBackoffMultiplier', 'grpcClientProducerMaxAttempts', 'grpcMaxInboundMessageSize',
      'grpcProxyRelayRequestTimeoutInSeconds', 'grpcServerPort', 'grpcTlsMode', 'haListenPort', 'haMasterAddress',
      'haSemantics', 'initAuthenticationUser', 'listenPort', 'mappedFileSizeCommitLog', 'mappedFileSizeConsumeQueue',
      'maxDelayTimeMills', 'maxHashSlotNum', 'maxIndexNum', 'maxInvisibleTimeMills', 'maxMessageGroupSize',
      'maxMsgsNumBatch', 'maxTransactionRecoverySecond', 'maxUserPropertySize', 'messageDelayLevel',
      'messageIndexEnable', 'messageIndexSafe', 'metricsExporterType', 'metricsPromExporterHost',
      'metricsPromExporterPort', 'minInvisibleTimeMillsForRecv', 'msgTraceTopicName', 'namesrvAddr', 'preferredLeaderId', 'recoverScanFileNum',
      'registerNameServerPeriod', 'reviveQueueNum', 'rocketmq.acl.plain.file', 'rocketmqHome', 'storePathCommitLog',
      'storePathDLedgerCommitLog', 'storePathRootDir', 'timerPrecisionMs', 'timerWheelEnable', 'tls.client.authServer', 'tls.client.trustCertPath',
      'tls.config.file', 'tls.enable', 'tls.server.authClient', 'tls.server.certPath', 'tls.server.keyPassword',
      'tls.server.keyPath', 'tls.server.mode', 'tls.server.need.client.auth', 'tls.server.trustCertPath',
      'tlsCertPath', 'tlsKeyPath', 'tlsTestModeEnable', 'traceTopicEnable', 'userPropertyMaxNum',
    ]);
  });
});
