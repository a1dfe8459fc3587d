// ACL 1.0 request signatures (Java acl/common/AclUtils.combineRequestContent, AclSigner): HMAC-SHA1, base64, over
// the values of the header fields sorted by name (the signature itself left out) followed by the body.
import { createHmac } from 'node:crypto';
import type { RemotingCommand } from '../../remoting/command.js';

export const ACCESS_KEY = 'AccessKey';
export const SECRET_KEY = 'SecretKey';
export const SIGNATURE = 'Signature';
export const SECURITY_TOKEN = 'SecurityToken';
/** Java MixAll.UNIQUE_MSG_QUERY_FLAG: added by the client after signing, so the broker leaves it out too. */
const UNIQUE_MSG_QUERY_FLAG = '_UNIQUE_KEY_QUERY';

/** The bytes the client signed, as the broker rebuilds them (Java PlainAccessValidator.parse). */
export function signedContent(req: RemotingCommand): Buffer {
  const keys = Object.keys(req.extFields)
    .filter((k) => k !== SIGNATURE && k !== UNIQUE_MSG_QUERY_FLAG)
    .sort(); // Java TreeMap: String.compareTo = UTF-16 code unit order, which is JS's default sort
  let text = '';
  for (const k of keys) text += req.extFields[k];
  const head = Buffer.from(text, 'utf8');
  return req.body && req.body.length > 0 ? Buffer.concat([head, req.body]) : head;
}

export function calSignature(content: Buffer, secretKey: string): string {
  return createHmac('sha1', Buffer.from(secretKey, 'utf8')).update(content).digest('base64');
}

/** Signs a request as the stock clients' AclClientRPCHook does (tests and tools). */
export function signRequest(req: RemotingCommand, accessKey: string, secretKey: string, securityToken?: string): RemotingCommand {
  req.extFields[ACCESS_KEY] = accessKey;
  if (securityToken !== undefined) req.extFields[SECURITY_TOKEN] = securityToken;
  delete req.extFields[SIGNATURE];
  req.extFields[SIGNATURE] = calSignature(signedContent(req), secretKey);
  return req;
}
