import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { HeaderReader, type RemotingCommand, createResponse } from '../../remoting/command.js';
import type { ProcessorTable } from '../../remoting/dispatcher.js';
import type { BrokerContext } from '../context.js';

/** MixAll.UNIQUE_MSG_QUERY_FLAG: extField sent by MQClientAPIImpl.queryMessage ("true" for a UNIQ_KEY lookup). */
export const UNIQUE_MSG_QUERY_FLAG = '_UNIQUE_KEY_QUERY';

/**
 * QUERY_MESSAGE (12), Java QueryMessageProcessor.queryMessage: the records whose KEYS or UNIQ_KEY match, from
 * the index. Request header topic, key, maxNum, beginTimestamp, endTimestamp (all required); response header
 * indexLastUpdateTimestamp, indexLastUpdatePhyoffset (always present); body = the raw records, concatenated.
 */
export function queryMessageProcessors(ctx: BrokerContext): ProcessorTable {
  return [
    [RequestCode.QUERY_MESSAGE, (req) => queryMessage(ctx, req)],
  ];
}

async function queryMessage(ctx: BrokerContext, req: RemotingCommand): Promise<RemotingCommand> {
  const h = new HeaderReader(req.extFields);
  const topic = h.str('topic');
  const key = h.str('key');
  let maxNum = h.int('maxNum');
  const beginTimestamp = h.long('beginTimestamp');
  const endTimestamp = h.long('endTimestamp');
  // Java compares the string exactly; a unique-key lookup always asks for defaultQueryMaxNum.
  if (req.extFields[UNIQUE_MSG_QUERY_FLAG] === 'true') maxNum = ctx.config.defaultQueryMaxNum;

  // The store caps maxNum at maxMsgsNumBatch (Java IndexService.queryOffset).
  const result = await ctx.store.queryMessage(topic, key, maxNum, beginTimestamp, endTimestamp);
  const header = {
    indexLastUpdateTimestamp: String(result.indexLastUpdateTimestamp),
    indexLastUpdatePhyoffset: String(result.indexLastUpdatePhyoffset),
  };
  if (result.records.length === 0) {
    return createResponse(ResponseCode.QUERY_NOT_FOUND, 'can not find message, maybe time range not correct', header);
  }
  const res = createResponse(ResponseCode.SUCCESS, undefined, header);
  res.bodyParts = result.records;
  return res;
}
