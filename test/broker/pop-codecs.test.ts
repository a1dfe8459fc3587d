// POP handle and record codecs against strings produced by the official 5.3.3 stack (grpc-pop-brief §4: handles
// seen on the wire from rocketmq-proxy, fastjson 1.2.83 output of PopCheckPoint / AckMsg / BatchAckMsg /
// BatchAckMessageRequestBody), and the Java error texts for malformed input.
import { describe, expect, it } from 'vitest';
import {
  ExtraInfoError, ExtraInfoReader, buildExtraInfo, decodeReceiptHandle, encodeReceiptHandle, isHandleExpired, javaSplit,
  parseMsgOffsetInfo, parseOrderCountInfo, parseStartOffsetInfo,
} from '../../src/broker/pop/extra-info.js';
import { normalTopicOf, popRetryTopic, realTopicOf, retryFlagOf } from '../../src/broker/pop/pop-keys.js';
import {
  type CheckPoint, ackUniqueId, bitsOfBytes, bytesOfBits, ckUniqueId, decodeAck, decodeBatchAckBody, decodeCheckPoint, encodeAck,
  encodeBatchAckBody, encodeCheckPoint, indexOfAck,
} from '../../src/broker/pop/pop-records.js';
import { buildOffsetList, needBlock, nextOffsetOf, type OrderInfo } from '../../src/broker/pop/order-info-manager.js';
import { allocateAveragely, allocateByCircle, allocateForPop } from '../../src/broker/pop/assignment-service.js';

describe('receipt handles (ReceiptHandle / ExtraInfoUtil)', () => {
  it('round-trips the handles an official proxy handed out', () => {
    for (const h of ['0 1796160752930 10000 0 0 broker-a 3 0 813', '0 1796160780910 10000 2 1 broker-a 0 0 4509',
      '0 1796160866815 60000 999 0 broker-a 0 1 8678']) {
      expect(encodeReceiptHandle(decodeReceiptHandle(h))).toBe(h);
    }
    expect(decodeReceiptHandle('0 1796160780910 10000 2 1 broker-a 0 0 4509')).toEqual({
      startOffset: 0, popTime: 1796160780910, invisibleTime: 10000, reviveQid: 2, retryFlag: '1', brokerName: 'broker-a',
      queueId: 0, queueOffset: 0, commitLogOffset: 4509,
    });
    // the broker's POP_CK has 8 fields: commitLogOffset -1, encoded back without it
    const eight = decodeReceiptHandle('5 1700000000000 60000 3 0 broker-a 1 6');
    expect(eight.commitLogOffset).toBe(-1);
    expect(encodeReceiptHandle(eight)).toBe('5 1700000000000 60000 3 0 broker-a 1 6');
    expect(buildExtraInfo(5, 1700000000000, 60000, 3, '%RETRY%G_T', 'broker-a', 0, 6)).toBe('5 1700000000000 60000 3 1 broker-a 0 6');
  });

  it('refuses malformed handles with the Java texts', () => {
    expect(() => decodeReceiptHandle('garbage')).toThrow('Parse failed, dataList size 1');
    expect(() => decodeReceiptHandle('')).toThrow('Parse failed, dataList size 1');
    expect(() => decodeReceiptHandle('a 1 2 3 0 b 0 0')).toThrow('For input string: "a"');
    try {
      decodeReceiptHandle('1 2 3 4 0 b x 0');
    } catch (err) {
      expect((err as ExtraInfoError).javaText).toBe('java.lang.NumberFormatException: For input string: "x"');
    }
    // trailing separators vanish as in Java's String.split
    expect(javaSplit('1 2 3   ')).toEqual(['1', '2', '3']);
    const x = new ExtraInfoReader('1 2');
    expect(() => x.brokerName).toThrow('getBrokerName fail, extraInfoStrs length 2');
    expect(x.popTime).toBe(2);
  });

  it('expires at popTime + invisibleTime', () => {
    expect(isHandleExpired({ popTime: 1000, invisibleTime: 500 }, 1499)).toBe(false);
    expect(isHandleExpired({ popTime: 1000, invisibleTime: 500 }, 1500)).toBe(true);
  });

  it('reads the response header lists as MQClientAPIImpl does', () => {
    expect(parseStartOffsetInfo('0 1 5;1 0 3')).toEqual(new Map([['0@1', 5], ['1@0', 3]]));
    expect(parseMsgOffsetInfo('0 1 5,6,9')).toEqual(new Map([['0@1', [5, 6, 9]]]));
    expect(parseOrderCountInfo('0 qo1%5 2;0 1 0')).toEqual(new Map([['0@qo1%5', 2], ['0@1', 0]]));
    expect(parseStartOffsetInfo('')).toBeUndefined();
    expect(() => parseStartOffsetInfo('0 1 5;0 1 6')).toThrow('duplicate');
  });

  it('names retry topics as KeyBuilder does', () => {
    expect(popRetryTopic('T', 'G', false)).toBe('%RETRY%G_T');
    expect(popRetryTopic('T', 'G', true)).toBe('%RETRY%G+T');
    expect(retryFlagOf('T')).toBe('0');
    expect(retryFlagOf('%RETRY%G_T')).toBe('1');
    expect(retryFlagOf('%RETRY%G+T')).toBe('2');
    expect(realTopicOf('T', 'G', '2')).toBe('%RETRY%G+T');
    expect(realTopicOf('T', 'G', '7')).toBeUndefined();
    expect(normalTopicOf('%RETRY%G_a_b', 'G')).toBe('a_b');
  });
});

describe('revive records (fastjson 1.2.83 output of the official classes)', () => {
  const ck: CheckPoint = {
    startOffset: 5, popTime: 1700000000000, invisibleTime: 60000, bitMap: 0, num: 2, queueId: 1, topic: 'T', group: 'G',
    reviveOffset: 0, queueOffsetDiff: [0, 1], brokerName: 'broker-a',
  };

  it('writes a checkpoint byte for byte as PopCheckPoint', () => {
    expect(encodeCheckPoint(ck)).toBe(
      '{"bm":0,"bn":"broker-a","c":"G","d":[0,1],"it":60000,"n":2,"pt":1700000000000,"q":1,"reviveTime":1700000060000,"ro":0,"so":5,"t":"T"}',
    );
    expect(encodeCheckPoint({ ...ck, rePutTimes: '1' })).toContain('"ro":0,"rp":"1","so":5');
    expect(decodeCheckPoint(encodeCheckPoint(ck))).toEqual(ck);
    expect(ckUniqueId(ck)).toBe('T@1@5@G@1700000000000@broker-a@ck');
  });

  it('writes acks and batch acks as AckMsg / BatchAckMsg, and reads the long field names too', () => {
    const ack = { ackOffset: 6, startOffset: 5, group: 'G', topic: 'T', queueId: 1, popTime: 1700000000000, brokerName: 'broker-a' };
    expect(encodeAck(ack)).toBe('{"ao":6,"bn":"broker-a","c":"G","pt":1700000000000,"q":1,"so":5,"t":"T"}');
    expect(encodeAck({ ...ack, ackOffset: -1, ackOffsetList: [5, 6] }))
      .toBe('{"ao":-1,"aol":[5,6],"bn":"broker-a","c":"G","pt":1700000000000,"q":1,"so":5,"t":"T"}');
    expect(ackUniqueId({ ...ack, ackOffset: -1 })).toBe('T@1@-1@G@1700000000000@broker-a@ack');
    expect(decodeAck('{"ackOffset":6,"startOffset":5,"consumerGroup":"G","topic":"T","queueId":1,"popTime":1700000000000,"brokerName":"broker-a"}'))
      .toEqual(ack);
    expect(decodeCheckPoint('{"so":1}')).toBeUndefined();
    expect(decodeCheckPoint('not json')).toBeUndefined();
  });

  it('maps ack offsets to checkpoint bits, old checkpoints without d included', () => {
    const sparse = { ...ck, startOffset: 10, num: 3, queueOffsetDiff: [0, 4, 7] };
    expect(indexOfAck(sparse, 14)).toBe(1);
    expect(indexOfAck(sparse, 12)).toBe(-1);
    expect(indexOfAck(sparse, 9)).toBe(-1);
    const old = { ...ck, startOffset: 10, num: 3, queueOffsetDiff: undefined };
    expect(indexOfAck(old, 12)).toBe(2);
    expect(indexOfAck(old, 13)).toBe(-1);
  });

  it('reads a BatchAckMessageRequestBody as fastjson wrote it (BitSet {0,1,9} = "AwI=")', () => {
    const text = '{"acks":[{"b":"AwI=","c":"G","it":60000,"pt":1700000000000,"q":1,"r":"0","rq":3,"so":5,"t":"T"}],"brokerName":"broker-a"}';
    const body = decodeBatchAckBody(Buffer.from(text));
    expect(body).toEqual({
      brokerName: 'broker-a',
      acks: [{ group: 'G', topic: 'T', retry: '0', startOffset: 5, queueId: 1, reviveQueueId: 3, popTime: 1700000000000, invisibleTime: 60000, bits: [0, 1, 9] }],
    });
    expect(encodeBatchAckBody('broker-a', body.acks)).toBe(text);
    expect(bytesOfBits([0, 1, 9])).toEqual(Buffer.from([3, 2]));
    expect(bitsOfBytes(Buffer.from([0x80]))).toEqual([7]);
    expect(() => decodeBatchAckBody(Buffer.from('[1]'))).toThrow('JSON object');
  });
});

describe('FIFO order info (ConsumerOrderInfoManager.OrderInfo)', () => {
  it('blocks until every offset of the batch is acked or visible again', () => {
    const info: OrderInfo = { popTime: 1000, invisibleTime: 500, offsetList: buildOffsetList([7, 8, 10]), lastConsumeTimestamp: 0, commitOffsetBit: 0 };
    expect(info.offsetList).toEqual([7, 1, 3]);
    expect(needBlock(info, undefined, 500, 1200)).toBe(true);
    expect(needBlock(info, undefined, 500, 1500)).toBe(false);
    info.attemptId = 'a1';
    expect(needBlock(info, 'a1', 500, 1200)).toBe(false);
    info.commitOffsetBit = 0b011;
    expect(nextOffsetOf(info)).toBe(10);
    info.offsetNextVisibleTime = new Map([[10, 5000]]);
    expect(needBlock(info, undefined, 500, 4000)).toBe(true);
    info.commitOffsetBit = 0b111;
    expect(nextOffsetOf(info)).toBe(11);
    expect(needBlock(info, undefined, 500, 1200)).toBe(false);
  });
});

describe('queue assignment strategies', () => {
  const mqs = Array.from({ length: 5 }, (_, i) => ({ brokerName: 'b', queueId: i, topic: 'T' }));
  it('AVG and AVG_BY_CIRCLE as the Java strategies', () => {
    expect(allocateAveragely('c0', mqs, ['c0', 'c1']).map((q) => q.queueId)).toEqual([0, 1, 2]);
    expect(allocateAveragely('c1', mqs, ['c0', 'c1']).map((q) => q.queueId)).toEqual([3, 4]);
    expect(allocateByCircle('c1', mqs, ['c0', 'c1']).map((q) => q.queueId)).toEqual([1, 3]);
    expect(allocateAveragely('x', mqs, ['c0'])).toEqual([]);
  });
  it('POP: every client gets queue -1 per broker unless popShareQueueNum limits it', () => {
    expect(allocateForPop(allocateAveragely, 'c0', mqs, ['c0', 'c1'], 0)).toEqual([{ brokerName: 'b', queueId: -1, topic: 'T' }]);
    expect(allocateForPop(allocateAveragely, 'c0', mqs, ['c0', 'c1', 'c2', 'c3'], 1).map((q) => q.queueId)).toEqual([0, 1, 2]);
  });
});
