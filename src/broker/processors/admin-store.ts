// Store inspection and maintenance for operators: QUERY_CONSUME_QUEUE (321, mqadmin queryCq), CLEAN_UNUSED_TOPIC
// (316, cleanUnusedTopic), CLEAN_EXPIRED_CONSUMEQUEUE (306, cleanExpiredCQ), DELETE_EXPIRED_COMMITLOG (329,
// deleteExpiredCommitLog). Java: broker/processor/AdminBrokerProcessor.java (queryConsumeQueue, cleanUnusedTopic,
// cleanExpiredConsumeQueue, deleteExpiredCommitLog) and DefaultMessageStore's methods they call.
import { stringifyFastjson } from '../../common/fastjson.js';
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { HeaderReader, type RemotingCommand, createResponse } from '../../remoting/command.js';
import type { ProcessorTable } from '../../remoting/dispatcher.js';
import { CQ_UNIT_SIZE } from '../../store/index.js';
import type { BrokerContext } from '../context.js';
import { isSystemTopic } from './admin-topic.js';

/**
 * Entries one QUERY_CONSUME_QUEUE answers at most. Java stops at the end of the consume-queue file holding `index`
 * (300,000 entries by default, ~24 MB of JSON: beyond the clients' 16 MiB frame limit); we stop there too, or here
 * (mqadmin asks for 10 by default). 100,000 took 329 ms of JSON alone on the event loop (the fuzz, seed 90417, saw
 * stalls up to 0.66 s); 2,000 take 5 ms and 150 KB.
 */
export const QUERY_CQ_MAX_ENTRIES = 2_000;
/** Java MixAll.LMQ_PREFIX: light message queues, never cleaned as unused. */
const LMQ_PREFIX = '%LMQ%';

/**
 * Java queryConsumeQueue: the entries of one queue from `index` (at most `count`, within one consume-queue file),
 * with the group's subscription when `consumerGroup` is given. An index outside [min, max) answers SUCCESS with
 * Java's remark; Java sends no body then (and mqadmin fails on it), we send the queue's max and min with no entries.
 */
async function queryConsumeQueue(ctx: BrokerContext, req: RemotingCommand): Promise<RemotingCommand> {
  const h = new HeaderReader(req.extFields);
  const topic = h.str('topic');
  const queueId = h.int('queueId');
  const index = h.long('index');
  const count = h.int('count');
  const group = h.optStr('consumerGroup');
  const { store } = ctx;
  if (!store.getQueueIds(topic).includes(queueId)) {
    return createResponse(ResponseCode.SYSTEM_ERROR, `${queueId}@${topic} is not exist!`);
  }
  const maxQueueIndex = store.getMaxOffsetInQueue(topic, queueId);
  const minQueueIndex = store.getMinOffsetInQueue(topic, queueId);
  const body: Record<string, unknown> = { maxQueueIndex, minQueueIndex };
  if (group !== undefined) {
    const sub = ctx.consumerManager.findSubscriptionData(group, topic);
    if (sub) {
      body.subscriptionData = sub;
      // Java prints its ConsumerFilterData, which only SQL92 subscriptions have (JSON null for tags).
      body.filterData = sub.expressionType === 'SQL92'
        ? stringifyFastjson({ clientVersion: sub.subVersion, consumerGroup: group, expression: sub.subString, expressionType: sub.expressionType, topic })
        : 'null';
    } else {
      body.filterData = `${group}@${topic} is not online!`;
    }
  }
  const encode = (): Buffer => Buffer.from(stringifyFastjson(body));
  if (index < minQueueIndex || index >= maxQueueIndex) {
    return createResponse(ResponseCode.SUCCESS, `Index ${index} of ${queueId}@${topic} is not exist!`, {}, encode());
  }
  const perFile = Math.floor(ctx.config.mappedFileSizeConsumeQueue / CQ_UNIT_SIZE);
  const toFileEnd = perFile - (index % perFile);
  const wanted = Math.max(0, Math.min(count, toFileEnd, QUERY_CQ_MAX_ENTRIES));
  const entries = await store.getQueueEntries(topic, queueId, index, wanted);
  // Java ConsumeQueueData; eval / bitMap / extendDataJson belong to consume-queue ext units, which we do not write.
  body.queueData = entries
    .filter((e) => e.queueOffset - index < wanted)
    .map((e) => ({ eval: false, physicOffset: e.commitLogOffset, physicSize: e.sizeBytes, tagsCode: e.tagsCode }));
  return createResponse(ResponseCode.SUCCESS, undefined, {}, encode());
}

/**
 * Java cleanUnusedTopic (5.x DefaultMessageStore.cleanUnusedTopic): the consume queues of every topic the broker
 * has no config for are deleted, except system topics and LMQ queues.
 */
async function cleanUnusedTopic(ctx: BrokerContext): Promise<RemotingCommand> {
  const unused = ctx.store.getQueueTopics().filter((t) =>
    !ctx.topicConfigManager.get(t) && !isSystemTopic(ctx, t) && !t.startsWith(LMQ_PREFIX));
  ctx.logger.warn({ topics: unused }, 'cleanUnusedTopic: deleting the consume queues of topics without a config');
  for (const topic of unused) {
    try {
      await ctx.store.deleteTopic(topic);
    } catch (err) {
      ctx.logger.error({ err, topic }, 'cleanUnusedTopic: deleting queues failed');
      return createResponse(ResponseCode.SYSTEM_ERROR, `deleting the queues of unused topic ${topic} failed (${(err as NodeJS.ErrnoException).code ?? 'error'}; see the broker log)`);
    }
  }
  return createResponse(ResponseCode.SUCCESS);
}

async function cleanExpiredConsumeQueue(ctx: BrokerContext): Promise<RemotingCommand> {
  ctx.logger.warn('cleanExpiredConsumeQueue invoked');
  await ctx.store.cleanExpiredConsumeQueues();
  return createResponse(ResponseCode.SUCCESS);
}

function deleteExpiredCommitLog(ctx: BrokerContext): RemotingCommand {
  ctx.logger.warn('deleteExpiredCommitLog invoked');
  ctx.store.executeDeleteFilesManually();
  return createResponse(ResponseCode.SUCCESS);
}

export function adminStoreProcessors(ctx: BrokerContext): ProcessorTable {
  return [
    [RequestCode.QUERY_CONSUME_QUEUE, (req) => queryConsumeQueue(ctx, req)],
    [RequestCode.CLEAN_UNUSED_TOPIC, () => cleanUnusedTopic(ctx)],
    [RequestCode.CLEAN_EXPIRED_CONSUMEQUEUE, () => cleanExpiredConsumeQueue(ctx)],
    [RequestCode.DELETE_EXPIRED_COMMITLOG, () => deleteExpiredCommitLog(ctx)],
  ];
}
