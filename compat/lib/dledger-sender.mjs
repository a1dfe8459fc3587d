// The sender of the DLedger scripts (compat/dledger-faults.mjs, compat/dledger-compat.mjs): one stock ali-ons
// producer sending unique bodies one at a time, every SEND_OK (queue id, queue offset, msgId, when) and every
// failure recorded, routes polled every second. stop() ends the sending and closes the producer.
import { Message, producer, sleep } from './ha-tools.mjs';

export function startSender(nsAddr, topic, producerGroup, bodyPrefix) {
  const p = producer(nsAddr, producerGroup, { pollNameServerInteval: 1000 });
  // a second listener: sdk-base prints every error to stderr while fewer than two are registered (killed members'
  // connections are refused all through a run)
  p.on('error', () => undefined);
  const s = { acked: [], failedAt: [], sending: true, tried: 0 };
  s.done = (async () => {
    await p.ready();
    while (s.sending) {
      const body = `${bodyPrefix}-${process.pid}-${s.tried++}`;
      const sentAt = Date.now();
      try {
        const r = await p.send(new Message(topic, 'TagF', body));
        if (r.sendStatus === 'SEND_OK') {
          s.acked.push({ body, queueId: Number(r.messageQueue.queueId), queueOffset: r.queueOffset, msgId: r.msgId, sentAt, at: Date.now() });
        } else {
          s.failedAt.push(Date.now());
        }
      } catch {
        s.failedAt.push(Date.now());
        await sleep(50); // no route at all answers at once: do not spin
      }
    }
    await p.close();
  })();
  s.stop = async () => {
    s.sending = false;
    await s.done;
  };
  /** SEND_OKs that arrived after `t`. */
  s.okSince = (t) => {
    let n = 0;
    for (let i = s.acked.length - 1; i >= 0 && s.acked[i].at > t; i--) n++;
    return n;
  };
  return s;
}
