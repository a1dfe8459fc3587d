import { ResponseCode } from '../../common/response-code.js';
import { type RemotingCommand, createResponse } from '../../remoting/command.js';
import type { PutResult, PutStatus } from '../../store/index.js';

/** The one table mapping store put outcomes to response codes (Java SendMessageProcessor.handlePutMessageResult). */
const PUT_STATUS_TO_CODE: Record<PutStatus, number> = {
  PUT_OK: ResponseCode.SUCCESS,
  FLUSH_DISK_TIMEOUT: ResponseCode.FLUSH_DISK_TIMEOUT,
  FLUSH_SLAVE_TIMEOUT: ResponseCode.FLUSH_SLAVE_TIMEOUT,
  SLAVE_NOT_AVAILABLE: ResponseCode.SLAVE_NOT_AVAILABLE,
  SERVICE_NOT_AVAILABLE: ResponseCode.SERVICE_NOT_AVAILABLE,
  CREATE_MAPPED_FILE_FAILED: ResponseCode.SYSTEM_ERROR,
  MESSAGE_ILLEGAL: ResponseCode.MESSAGE_ILLEGAL,
  PROPERTIES_SIZE_EXCEEDED: ResponseCode.MESSAGE_ILLEGAL,
  OS_PAGE_CACHE_BUSY: ResponseCode.SYSTEM_BUSY,
  IN_SYNC_REPLICAS_NOT_ENOUGH: ResponseCode.SYSTEM_ERROR,
  UNKNOWN_ERROR: ResponseCode.SYSTEM_ERROR,
};

/** Where the official 4.9.8 broker answers otherwise (4.9.8 SendMessageProcessor: OS_PAGECACHE_BUSY is SYSTEM_ERROR). */
const PUT_STATUS_TO_CODE_498: Partial<Record<PutStatus, number>> = {
  OS_PAGE_CACHE_BUSY: ResponseCode.SYSTEM_ERROR,
};

const PUT_STATUS_REMARK: Partial<Record<PutStatus, string>> = {
  SERVICE_NOT_AVAILABLE: 'service not available now, the disk may be full or the broker is shutting down',
  CREATE_MAPPED_FILE_FAILED: 'create mapped file failed, server is busy or broken',
  MESSAGE_ILLEGAL: 'the message is illegal, maybe msg body or properties length not matched',
  PROPERTIES_SIZE_EXCEEDED: 'the message properties are larger than 32767 bytes',
  OS_PAGE_CACHE_BUSY: '[PC_SYNCHRONIZED]broker busy, start flow control for a while',
  IN_SYNC_REPLICAS_NOT_ENOUGH: 'in-sync replicas not enough',
  UNKNOWN_ERROR: 'UNKNOWN_ERROR',
};

/**
 * The response a put outcome gets. `semantics` (haSemantics) picks the official broker whose table is followed where
 * 4.9.8 and 5.3.3 differ; a 4.9.8 producer retries SYSTEM_ERROR but not SYSTEM_BUSY (protocol/dledger.md §8.22).
 */
export function putResultToResponse(result: PutResult, semantics: '4.9.8' | '5.3.3' = '5.3.3'): RemotingCommand {
  const code = (semantics === '4.9.8' ? PUT_STATUS_TO_CODE_498[result.status] : undefined) ??
    PUT_STATUS_TO_CODE[result.status] ?? ResponseCode.SYSTEM_ERROR;
  const remark = code === ResponseCode.SUCCESS ? undefined : (result.remark ?? PUT_STATUS_REMARK[result.status] ?? result.status);
  return createResponse(code, remark);
}
