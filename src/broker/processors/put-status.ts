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
  UNKNOWN_ERROR: ResponseCode.SYSTEM_ERROR,
};

const PUT_STATUS_REMARK: Partial<Record<PutStatus, string>> = {
  SERVICE_NOT_AVAILABLE: 'service not available now, the disk may be full or the broker is shutting down',
  CREATE_MAPPED_FILE_FAILED: 'create mapped file failed, server is busy or broken',
  MESSAGE_ILLEGAL: 'the message is illegal, maybe msg body or properties length not matched',
  PROPERTIES_SIZE_EXCEEDED: 'the message properties are larger than 32767 bytes',
  OS_PAGE_CACHE_BUSY: '[PC_SYNCHRONIZED]broker busy, start flow control for a while',
  UNKNOWN_ERROR: 'UNKNOWN_ERROR',
};

export function putResultToResponse(result: PutResult): RemotingCommand {
  const code = PUT_STATUS_TO_CODE[result.status] ?? ResponseCode.SYSTEM_ERROR;
  const remark = code === ResponseCode.SUCCESS ? undefined : (result.remark ?? PUT_STATUS_REMARK[result.status] ?? result.status);
  return createResponse(code, remark);
}
