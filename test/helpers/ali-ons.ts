import { Consumer, Producer } from 'ali-ons';
import { silentLogger } from '../../src/common/logger.js';

/**
 * ali-ons resolves nameservers over HTTP unless `nameSrv` is given; with it the HTTP client is never called.
 * This stand-in fails loudly if it ever is.
 */
const httpclient = {
  request() {
    throw new Error('ali-ons tried to resolve nameservers over HTTP; nameSrv should be used');
  },
};

const quietLogger = (() => {
  const l = silentLogger();
  return { info: () => undefined, warn: () => undefined, debug: () => undefined, error: (...a: unknown[]) => l.error(a) };
})();

let instanceSeq = 0;

export function onsProducer(namesrvAddr: string | string[], producerGroup: string): Producer {
  return new Producer({ httpclient, nameSrv: namesrvAddr, producerGroup, instanceName: `p${process.pid}_${++instanceSeq}`, logger: quietLogger });
}

export function onsConsumer(namesrvAddr: string | string[], consumerGroup: string, extra: Record<string, unknown> = {}): Consumer {
  const consumer = new Consumer({
    httpclient,
    nameSrv: namesrvAddr,
    consumerGroup,
    instanceName: `c${process.pid}_${++instanceSeq}`,
    logger: quietLogger,
    consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
    rebalanceInterval: 1000,
    ...extra,
  });
  // Pulls parked on the broker fail with "socket closed" when a test stops the server; sdk-base would print them.
  consumer.on('error', () => undefined);
  return consumer;
}
