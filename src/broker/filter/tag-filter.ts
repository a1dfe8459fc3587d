import { javaStringHashCode } from '../../common/java-hash.js';
import type { SubscriptionData } from '../client/types.js';

export const SUB_ALL = '*';

/** Java FilterAPI.buildSubscriptionData for TAG expressions: `a || b`, `*` or empty = everything. */
export function buildSubscriptionData(topic: string, subString: string | undefined, expressionType = 'TAG', subVersion = Date.now()): SubscriptionData {
  const sub: SubscriptionData = {
    topic,
    subString: subString && subString.trim() !== '' ? subString : SUB_ALL,
    expressionType: expressionType || 'TAG',
    tagsSet: [],
    codeSet: [],
    subVersion,
    classFilterMode: false,
  };
  if (sub.expressionType === 'TAG' && sub.subString.trim() !== SUB_ALL) {
    for (const raw of sub.subString.split('||')) {
      const tag = raw.trim();
      if (tag === '') continue;
      sub.tagsSet.push(tag);
      sub.codeSet.push(javaStringHashCode(tag));
    }
  }
  return sub;
}

/**
 * The broker-side tag filter on consume-queue tagsCode (Java ExpressionMessageFilter.isMatchedByConsumeQueue):
 * hash-only, so colliding tags pass and the client re-filters by string. Returns undefined for "match all".
 */
export function tagsCodeFilter(sub: SubscriptionData | undefined): ((tagsCode: number) => boolean) | undefined {
  if (!sub || sub.classFilterMode || sub.expressionType !== 'TAG') return undefined;
  if (sub.subString.trim() === SUB_ALL || sub.subString.trim() === '') return undefined;
  const codes = new Set(sub.codeSet.length > 0 ? sub.codeSet : sub.tagsSet.map(javaStringHashCode));
  return (tagsCode: number) => codes.has(tagsCode | 0);
}
