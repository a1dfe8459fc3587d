// The retry topic of a consumer group exists, and the nameservers know it, by the time the first heartbeat is
// answered (Java ClientManageProcessor.heartBeat → createTopicInSendMessageBackMethod → registerBrokerAll, done
// before the answer). ali-ons looks the route of %RETRY%<group> up right after that heartbeat and, against a broker
// whose registration arrives later, reports "No topic route info in name server for the topic: %RETRY%<group>".
// The broker reaches its nameserver through a proxy that delays every chunk by 150 ms (a nameserver one slow hop
// away); ali-ons talks to the nameserver directly.
import { Message } from 'ali-ons';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Broker, createBroker } from '../../src/broker/broker-controller.js';
import { BROKER_SCHEMA, NAMESRV_SCHEMA, defaults } from '../../src/common/config.js';
import { RequestCode } from '../../src/common/request-code.js';
import { silentLogger } from '../../src/common/logger.js';
import { createNamesrv } from '../../src/namesrv/index.js';
import { createRequest } from '../../src/remoting/command.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { onsConsumer, onsProducer } from '../helpers/ali-ons.js';
import { type TestServer, createTopic, tempDir, waitFor } from '../helpers/server.js';

const DELAY_MS = 150;

/** A TCP proxy to `target` that holds every chunk, both ways, for DELAY_MS. */
function slowProxy(target: number): Promise<net.Server> {
  const proxy = net.createServer((inbound) => {
    const outbound = net.connect(target, '127.0.0.1');
    const pipe = (from: net.Socket, to: net.Socket) => {
      from.on('data', (chunk) => setTimeout(() => to.destroyed || to.write(chunk), DELAY_MS));
      from.on('close', () => setTimeout(() => to.destroy(), DELAY_MS));
      from.on('error', () => undefined);
    };
    pipe(inbound, outbound);
    pipe(outbound, inbound);
  });
  return new Promise((resolve) => proxy.listen(0, '127.0.0.1', () => resolve(proxy)));
}

let server: TestServer;
let proxy: net.Server;
let stopAll: () => Promise<void>;

beforeAll(async () => {
  const storeDir = tempDir('retry-route');
  const ns = createNamesrv({ ...defaults(NAMESRV_SCHEMA), listenPort: 0, kvConfigPath: path.join(storeDir, 'kv.json') }, silentLogger());
  const nsPort = await ns.start();
  proxy = await slowProxy(nsPort);
  const broker: Broker = createBroker({
    ...defaults(BROKER_SCHEMA), brokerIP1: '127.0.0.1', listenPort: 0, storePathRootDir: storeDir,
    namesrvAddr: `127.0.0.1:${(proxy.address() as net.AddressInfo).port}`, mappedFileSizeCommitLog: 16 * 1024 * 1024,
  }, silentLogger());
  await broker.start();
  server = { namesrvAddr: `127.0.0.1:${nsPort}`, brokerAddr: broker.brokerAddr(), storeDir, broker } as TestServer;
  stopAll = async () => {
    await broker.shutdown();
    await ns.shutdown();
    await new Promise((r) => proxy.close(r));
  };
  await createTopic(server, 'RetryRouteTopic', 2);
});
afterAll(async () => {
  await stopAll?.();
});

describe('retry topics at the first heartbeat', () => {
  for (const round of [1, 2, 3]) {
    it(`ali-ons finds the route of %RETRY%<group> at once (new group ${round})`, async () => {
      const group = `GID_retry_route_${round}`;
      const errors: string[] = [];
      const consumer = onsConsumer(server.namesrvAddr, group);
      consumer.on('error', (err: Error) => errors.push(err.message));
      const received: string[] = [];
      consumer.subscribe('RetryRouteTopic', '*', async (msg) => {
        received.push(msg.body.toString());
      });
      const producer = onsProducer(server.namesrvAddr, 'PG_retry_route');
      try {
        await consumer.ready();
        await producer.ready();
        const res = await producer.send(new Message('RetryRouteTopic', 't', `hello ${round}`));
        expect(res.sendStatus).toBe('SEND_OK');
        // Delivery means the consumer has been through its start: route lookups, heartbeats, rebalance.
        await waitFor(() => received.includes(`hello ${round}`), 30_000, 'the message');
      } finally {
        await producer.close();
        await consumer.close();
      }
      expect(errors.filter((m) => m.includes('%RETRY%'))).toEqual([]);
      const client = new RemotingClient(silentLogger());
      try {
        const route = await client.request(server.namesrvAddr, createRequest(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: `%RETRY%${group}` }), 5000);
        expect(route.code).toBe(0);
      } finally {
        await client.close();
      }
    }, 60_000);
  }
});
