// apache.rocketmq.v2.Code and Status, and the one table from a broker refusal (a remoting response code, as the
// services answer) to a Code — as the official proxy maps broker answers (Java proxy grpc/v2/common/ResponseBuilder).
import { ResponseCode } from '../common/response-code.js';
import type { Refusal } from '../broker/outcome.js';

/** The Code values the endpoint answers (definition.proto `enum Code`); encoded by name. */
export const Code = {
  OK: 20000,
  MULTIPLE_RESULTS: 30000,
  BAD_REQUEST: 40000,
  ILLEGAL_ACCESS_POINT: 40001,
  ILLEGAL_TOPIC: 40002,
  ILLEGAL_CONSUMER_GROUP: 40003,
  ILLEGAL_MESSAGE_TAG: 40004,
  ILLEGAL_MESSAGE_KEY: 40005,
  ILLEGAL_MESSAGE_GROUP: 40006,
  ILLEGAL_MESSAGE_PROPERTY_KEY: 40007,
  INVALID_TRANSACTION_ID: 40008,
  ILLEGAL_MESSAGE_ID: 40009,
  ILLEGAL_FILTER_EXPRESSION: 40010,
  ILLEGAL_INVISIBLE_TIME: 40011,
  ILLEGAL_DELIVERY_TIME: 40012,
  INVALID_RECEIPT_HANDLE: 40013,
  MESSAGE_PROPERTY_CONFLICT_WITH_TYPE: 40014,
  UNRECOGNIZED_CLIENT_TYPE: 40015,
  MESSAGE_CORRUPTED: 40016,
  CLIENT_ID_REQUIRED: 40017,
  ILLEGAL_POLLING_TIME: 40018,
  UNAUTHORIZED: 40100,
  FORBIDDEN: 40300,
  NOT_FOUND: 40400,
  MESSAGE_NOT_FOUND: 40401,
  TOPIC_NOT_FOUND: 40402,
  CONSUMER_GROUP_NOT_FOUND: 40403,
  MESSAGE_BODY_TOO_LARGE: 41301,
  MESSAGE_BODY_EMPTY: 41302,
  TOO_MANY_REQUESTS: 42900,
  MESSAGE_PROPERTIES_TOO_LARGE: 43101,
  INTERNAL_SERVER_ERROR: 50001,
  HA_NOT_AVAILABLE: 50002,
  NOT_IMPLEMENTED: 50100,
  PROXY_TIMEOUT: 50400,
  MASTER_PERSISTENCE_TIMEOUT: 50401,
  SLAVE_PERSISTENCE_TIMEOUT: 50402,
} as const;

export type CodeName = keyof typeof Code;

export interface Status {
  code: CodeName;
  message: string;
}

export function status(code: CodeName, message?: string): Status {
  return { code, message: message ?? code };
}

export const OK: Status = status('OK', 'OK');

/**
 * A failure the endpoint answers in-band (Java GrpcProxyException): thrown inside an RPC handler, written as the
 * response's status (or, for Telemetry, closes the stream as the proxy does).
 */
export class GrpcStatusError extends Error {
  constructor(
    readonly code: CodeName,
    message: string,
  ) {
    super(message);
  }
}

/** Java ResponseBuilder.RESPONSE_CODE_MAPPING; everything else is INTERNAL_SERVER_ERROR with the broker's remark. */
const REFUSAL_TO_CODE = new Map<number, CodeName>([
  [ResponseCode.SUCCESS, 'OK'],
  [ResponseCode.SYSTEM_BUSY, 'TOO_MANY_REQUESTS'],
  [ResponseCode.REQUEST_CODE_NOT_SUPPORTED, 'NOT_IMPLEMENTED'],
  [ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, 'CONSUMER_GROUP_NOT_FOUND'],
  // Java: a missing topic surfaces as TopicRouteHelper.isTopicNotExistError → TOPIC_NOT_FOUND.
  [ResponseCode.TOPIC_NOT_EXIST, 'TOPIC_NOT_FOUND'],
]);

export function refusalStatus(r: Refusal): Status {
  return status(REFUSAL_TO_CODE.get(r.code) ?? 'INTERNAL_SERVER_ERROR', r.remark || String(r.code));
}

/** An unexpected error as a status: its message only (no stack frames; the proxy appends class and frame). */
export function errorStatus(err: unknown): Status {
  if (err instanceof GrpcStatusError) return status(err.code, err.message);
  return status('INTERNAL_SERVER_ERROR', err instanceof Error ? err.message : String(err));
}
