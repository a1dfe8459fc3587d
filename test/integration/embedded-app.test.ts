// An application's own test suite, as it would be written with rocketmq-ts installed: the server starts inside
// the test process (no container), the app's ali-ons producer and consumer talk to it, stop() cleans up.
import { Consumer, Message, Producer } from 'ali-ons';
import { type EmbeddedServer, startServer } from 'rocketmq-ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// ali-ons resolves nameservers over HTTP unless nameSrv is given; with it, this client is never called
const httpclient = { request: () => Promise.reject(new Error('not used with nameSrv')) };
const logger = { info() {}, warn() {}, debug() {}, error() {} };

describe('an app that produces and consumes orders', () => {
  let mq: EmbeddedServer;

  beforeAll(async () => {
    mq = await startServer(); // free ports, a temporary store
    await mq.createTopic('orders', 4);
  });
  afterAll(async () => {
    await mq.stop(); // store removed
  });

  it('delivers what it sent', async () => {
    const producer = new Producer({ httpclient, logger, nameSrv: mq.namesrvAddr, producerGroup: 'app-producer' });
    const consumer = new Consumer({ httpclient, logger, nameSrv: mq.namesrvAddr, consumerGroup: 'app-consumer', consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET' });
    consumer.on('error', () => undefined);
    try {
      await producer.ready();
      for (let i = 0; i < 10; i++) {
        const res = await producer.send(new Message('orders', 'created', JSON.stringify({ orderId: i })));
        expect(res.sendStatus).toBe('SEND_OK');
      }
      const received: number[] = [];
      const done = new Promise<void>((resolve) => {
        consumer.subscribe('orders', '*', async (msg: { body: Buffer }) => {
          received.push(JSON.parse(msg.body.toString()).orderId);
          if (received.length === 10) resolve();
        });
      });
      await consumer.ready();
      await done;
      expect(received.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    } finally {
      await consumer.close();
      await producer.close();
    }
  });
});
