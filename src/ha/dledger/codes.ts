// DLedger 0.3.1.2 request and response codes (D/protocol/DLedgerRequestCode, DLedgerResponseCode) and the vote
// result names (D/protocol/VoteResponse.RESULT), as data. protocol/dledger.md §1.4–§1.6.

/** Request codes on the peer port (D/protocol/DLedgerRequestCode). Nothing else exists in 0.3.1.2 (no 51006). */
export const DLedgerRequestCode = {
  METADATA: 50000,
  APPEND: 50001,
  GET: 50002,
  VOTE: 51001,
  HEART_BEAT: 51002,
  PULL: 51003,
  PUSH: 51004,
  LEADERSHIP_TRANSFER: 51005,
} as const;

/** Every D/protocol/DLedgerResponseCode value. LEADER_NOT_READY is defined but never produced by 0.3.1.2. */
export const DLedgerResponseCode = {
  UNKNOWN: -1,
  SUCCESS: 200,
  TIMEOUT: 300,
  METADATA_ERROR: 301,
  NETWORK_ERROR: 302,
  UNSUPPORTED: 303,
  UNKNOWN_GROUP: 400,
  UNKNOWN_MEMBER: 401,
  UNEXPECTED_MEMBER: 402,
  EXPIRED_TERM: 403,
  NOT_LEADER: 404,
  NOT_FOLLOWER: 405,
  INCONSISTENT_STATE: 406,
  INCONSISTENT_TERM: 407,
  INCONSISTENT_INDEX: 408,
  INCONSISTENT_LEADER: 409,
  INDEX_OUT_OF_RANGE: 410,
  UNEXPECTED_ARGUMENT: 411,
  REPEATED_REQUEST: 412,
  REPEATED_PUSH: 413,
  DISK_ERROR: 414,
  DISK_FULL: 415,
  TERM_NOT_READY: 416,
  FALL_BEHIND_TOO_MUCH: 417,
  TAKE_LEADERSHIP_FAILED: 418,
  INDEX_LESS_THAN_LOCAL_BEGIN: 419,
  REQUEST_WITH_EMPTY_BODYS: 420,
  PUSH_REQUEST_IS_FULL: 421,
  INTERNAL_ERROR: 500,
  TERM_CHANGED: 501,
  WAIT_QUORUM_ACK_TIMEOUT: 502,
  LEADER_PENDING_FULL: 503,
  ILLEGAL_MEMBER_STATE: 504,
  LEADER_NOT_READY: 505,
  LEADER_TRANSFERRING: 506,
} as const;

const RESPONSE_NAMES = new Map<number, string>(Object.entries(DLedgerResponseCode).map(([k, v]) => [v, k]));

/** The Java enum name of a response code (for logs), or `code <n>`. */
export function dledgerCodeName(code: number): string {
  return RESPONSE_NAMES.get(code) ?? `code ${code}`;
}

/** D/protocol/VoteResponse.RESULT, in ordinal order; written by name on the wire. */
export const VOTE_RESULTS = [
  'UNKNOWN',
  'ACCEPT',
  'REJECT_UNKNOWN_LEADER',
  'REJECT_UNEXPECTED_LEADER',
  'REJECT_EXPIRED_VOTE_TERM',
  'REJECT_ALREADY_VOTED',
  'REJECT_ALREADY_HAS_LEADER',
  'REJECT_TERM_NOT_READY',
  'REJECT_TERM_SMALL_THAN_LEDGER',
  'REJECT_EXPIRED_LEDGER_TERM',
  'REJECT_SMALL_LEDGER_END_INDEX',
  'REJECT_TAKING_LEADERSHIP',
] as const;
export type VoteResult = (typeof VOTE_RESULTS)[number];

/** D/protocol/PushEntryRequest.Type names. */
export const PUSH_TYPES = ['APPEND', 'COMMIT', 'COMPARE', 'TRUNCATE'] as const;
export type PushType = (typeof PUSH_TYPES)[number];

/** Every outgoing call waits this long (D/DLedgerRpcNettyService: invokeAsync/invokeSync with 3000). */
export const DLEDGER_RPC_TIMEOUT_MS = 3000;
