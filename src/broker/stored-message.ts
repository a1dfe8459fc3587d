import { javaStringHashCode } from '../common/java-hash.js';
import { MessageConst, encodeProperties } from '../common/message-properties.js';
import type { DecodedRecord, MessageToStore } from '../store/index.js';

/**
 * A stored record put again (delay and timer delivery, send-back, transaction commit and check renewal): the body
 * copied (the record may be a view of the commit log's tail cache), properties, tags hash, KEYS and UNIQ_KEY from
 * `props`, everything else from the record unless `overrides` says otherwise.
 */
export function messageFromRecord(
  rec: DecodedRecord, topic: string, queueId: number, props: Map<string, string>, overrides: Partial<MessageToStore> = {},
): MessageToStore {
  const tags = props.get(MessageConst.TAGS);
  return {
    topic,
    queueId,
    flag: rec.flag,
    body: Buffer.from(rec.body),
    propertiesString: overrides.propertiesString ?? encodeProperties(props),
    tagsCode: overrides.tagsCode ?? (tags ? javaStringHashCode(tags) : 0),
    keys: props.get(MessageConst.KEYS),
    uniqKey: props.get(MessageConst.UNIQ_CLIENT_MESSAGE_ID_KEYIDX),
    sysFlag: rec.sysFlag,
    bornTimestamp: rec.bornTimestamp,
    bornHost: rec.bornHost,
    storeHost: rec.storeHost,
    reconsumeTimes: rec.reconsumeTimes,
    preparedTransactionOffset: rec.preparedTransactionOffset,
    ...overrides,
  };
}
