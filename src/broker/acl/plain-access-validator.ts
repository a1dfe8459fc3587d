// ACL 1.0 checks of one request (Java acl/plain/PlainAccessValidator.parse + PlainPermissionManager.validate and
// checkPerm): which topics / groups a request code needs, then global white list → known key → account white
// address → signature → admin flag and permissions. A denial carries the official AclException text and the Java
// frame that threw it, because the official broker answers SYSTEM_ERROR with exactly that as the remark.
import { parseFastjson } from '../../common/fastjson.js';
import { RequestCode } from '../../common/request-code.js';
import type { RemotingCommand } from '../../remoting/command.js';
import { type OwnedAccess, Perm, permits } from './plain-acl-config.js';
import type { AddressMatcher } from './remote-address.js';
import { ACCESS_KEY, SIGNATURE, calSignature, signedContent } from './signature.js';

const RETRY_PREFIX = '%RETRY%';
/** Java TopicValidator.RMQ_SYS_TRACE_TOPIC: publishing traces needs no permission (PlainPermissionManager.validate). */
const TRACE_TOPIC = 'RMQ_SYS_TRACE_TOPIC';

/** Java Permission.ADMIN_CODE (4.9.x). */
const ADMIN_CODES = new Set<number>([
  RequestCode.UPDATE_AND_CREATE_TOPIC,
  RequestCode.UPDATE_BROKER_CONFIG,
  RequestCode.DELETE_TOPIC_IN_BROKER,
  RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP,
  RequestCode.DELETE_SUBSCRIPTIONGROUP,
]);

export interface AclDenial {
  message: string;
  /** The Java method and source line of 4.9.8 that throws it (PlainPermissionManager unless a class is named). */
  frame: string;
}

/** What the official broker answers: AclException.toString() and its first stack frame (RemotingHelper.exceptionSimpleDesc). */
export function denialRemark(d: AclDenial): string {
  const frame = d.frame.startsWith('PlainAccessValidator.') ? d.frame : `PlainPermissionManager.${d.frame}`;
  return `org.apache.rocketmq.acl.common.AclException: ${d.message}, org.apache.rocketmq.acl.plain.${frame}`;
}

export interface AclState {
  globalWhite: AddressMatcher[];
  accounts: Map<string, OwnedAccess>;
}

const retry = (group: string | undefined) => (group === undefined ? undefined : RETRY_PREFIX + group);

/** The resources a request needs (Java PlainAccessValidator.parse's switch; codes not listed need none). */
export function neededResources(req: RemotingCommand): Map<string, number> {
  const need = new Map<string, number>();
  const f = req.extFields;
  const add = (res: string | undefined, perm: number) => {
    if (res !== undefined) need.set(res, perm);
  };
  switch (req.code) {
    case RequestCode.SEND_MESSAGE:
      if (f.topic?.startsWith(RETRY_PREFIX)) add(retry(f.group), Perm.SUB);
      else add(f.topic, Perm.PUB);
      break;
    case RequestCode.SEND_MESSAGE_V2: // compact header: b = topic, a = producer group
      if (f.b?.startsWith(RETRY_PREFIX)) add(retry(f.a), Perm.SUB);
      else add(f.b, Perm.PUB);
      break;
    case RequestCode.CONSUMER_SEND_MSG_BACK:
      add(retry(f.group), Perm.SUB);
      break;
    case RequestCode.PULL_MESSAGE:
      add(f.topic, Perm.SUB);
      add(retry(f.consumerGroup), Perm.SUB);
      break;
    case RequestCode.QUERY_MESSAGE:
      add(f.topic, Perm.SUB);
      break;
    case RequestCode.HEART_BEAT: {
      const hb = req.body ? (parseFastjson(req.body.toString('utf8')) as { consumerDataSet?: unknown }) : {};
      const set = Array.isArray(hb?.consumerDataSet) ? hb.consumerDataSet : [];
      for (const data of set as Array<{ groupName?: string; subscriptionDataSet?: Array<{ topic?: string }> }>) {
        add(retry(data.groupName), Perm.SUB);
        for (const sub of data.subscriptionDataSet ?? []) add(sub.topic, Perm.SUB);
      }
      break;
    }
    case RequestCode.UNREGISTER_CLIENT:
    case RequestCode.GET_CONSUMER_LIST_BY_GROUP:
      add(retry(f.consumerGroup), Perm.SUB);
      break;
    case RequestCode.UPDATE_CONSUMER_OFFSET:
      add(retry(f.consumerGroup), Perm.SUB);
      add(f.topic, Perm.SUB);
      break;
    default:
      // SEND_BATCH_MESSAGE, LITE_PULL_MESSAGE and the rest: 4.9.x checks only the signature (and admin codes).
      break;
  }
  return need;
}

function printResource(res: string): string {
  return res.startsWith(RETRY_PREFIX) ? `group:${res.slice(RETRY_PREFIX.length)}` : `topic:${res}`;
}

/** Checks one request from `ip` (no port); undefined = allowed. */
export function validatePlainAccess(state: AclState, req: RemotingCommand, ip: string): AclDenial | undefined {
  let need: Map<string, number>;
  try {
    need = neededResources(req);
  } catch (err) {
    // Java parse() (before any check) wraps a body it cannot read in an AclException: denied, never waved through
    return { message: (err as Error).message, frame: 'PlainAccessValidator.parse(PlainAccessValidator.java:134)' };
  }
  for (const white of state.globalWhite) if (white(ip)) return undefined;
  const accessKey = req.extFields[ACCESS_KEY];
  if (accessKey === undefined) return { message: 'No accessKey is configured', frame: 'validate(PlainPermissionManager.java:664)' };
  const owned = state.accounts.get(accessKey);
  if (!owned) return { message: `No acl config for ${accessKey}`, frame: 'validate(PlainPermissionManager.java:668)' };
  if (owned.whiteAddress(ip)) return undefined;
  if (calSignature(signedContent(req), owned.secretKey) !== req.extFields[SIGNATURE]) {
    return { message: `Check signature failed for accessKey=${accessKey}`, frame: 'validate(PlainPermissionManager.java:684)' };
  }
  if (need.get(TRACE_TOPIC) === Perm.PUB) return undefined;
  if (ADMIN_CODES.has(req.code) && !owned.admin) {
    return {
      message: `Need admin permission for request code=${req.code}, but accessKey=${accessKey} is not`,
      frame: 'checkPerm(PlainPermissionManager.java:581)',
    };
  }
  if (owned.resourcePerms.size === 0 && owned.admin) return undefined; // Java: an admin without resource perms may do all
  for (const [res, perm] of need) {
    const ownedPerm = owned.resourcePerms.get(res);
    if (ownedPerm === undefined) {
      const dflt = res.startsWith(RETRY_PREFIX) ? owned.defaultGroupPerm : owned.defaultTopicPerm;
      if (!permits(perm, dflt)) return { message: `No default permission for ${printResource(res)}`, frame: 'checkPerm(PlainPermissionManager.java:606)' };
    } else if (!permits(perm, ownedPerm)) {
      return { message: `No default permission for ${printResource(res)}`, frame: 'checkPerm(PlainPermissionManager.java:611)' };
    }
  }
  return undefined;
}
