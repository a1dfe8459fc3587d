// The few properties the store itself reads from a record's property string (`k\x01v\x02...`): the index keys
// of an append, the tags and delay level of a record re-dispatched at recovery.
const NAME_VALUE_SEPARATOR = '\u0001';
const PROPERTY_SEPARATOR = '\u0002';

/** Value of one property in a `k\x01v\x02` string (first occurrence), or undefined. */
export function getProperty(propertiesString: string, name: string): string | undefined {
  const key = name + NAME_VALUE_SEPARATOR;
  let at = 0;
  while (at < propertiesString.length) {
    const end = propertiesString.indexOf(PROPERTY_SEPARATOR, at);
    const stop = end < 0 ? propertiesString.length : end;
    if (propertiesString.startsWith(key, at)) return propertiesString.slice(at + key.length, stop);
    at = stop + 1;
  }
  return undefined;
}

/** MessageToStore.keys / uniqKey, read from the properties when the caller filled in neither. */
export function indexKeysOf(msg: { keys?: string; uniqKey?: string; propertiesString: string }): { keys?: string; uniqKey?: string } {
  if (msg.keys !== undefined || msg.uniqKey !== undefined) return msg;
  if (msg.propertiesString.length === 0) return {};
  return { keys: getProperty(msg.propertiesString, 'KEYS'), uniqKey: getProperty(msg.propertiesString, 'UNIQ_KEY') };
}
