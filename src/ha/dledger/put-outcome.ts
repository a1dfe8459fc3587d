// What a DLedger append's outcome becomes as a put status (protocol/dledger.md §5.6; Java DLedgerCommitLog
// asyncPutMessage's thenApply switch, 4.9.8 and 5.3.3). The broker's one table (put-status.ts) turns the status into
// the response, which also differs by version: OS_PAGE_CACHE_BUSY is SYSTEM_ERROR in 4.9.8, SYSTEM_BUSY in 5.3.3.
import type { PutStatus } from '../../store/index.js';
import { DLedgerCode } from './types.js';

/** D/protocol/DLedgerResponseCode.LEADER_NOT_READY: defined, never produced by 0.3.1.2, still mapped by the broker. */
const LEADER_NOT_READY = 505;

/** An append refused before anything was written (the official future with pos −1): OS_PAGECACHE_BUSY in both. */
export const REFUSED_BEFORE_APPEND: PutStatus = 'OS_PAGE_CACHE_BUSY';

/** The put status of an append that was written and whose wait for the quorum ended with `code`. */
export function putStatusOfAck(code: number, semantics: '4.9.8' | '5.3.3'): PutStatus {
  switch (code) {
    case DLedgerCode.SUCCESS:
      return 'PUT_OK';
    case DLedgerCode.INCONSISTENT_LEADER:
    case DLedgerCode.NOT_LEADER:
    case LEADER_NOT_READY:
    case DLedgerCode.DISK_FULL:
      return 'SERVICE_NOT_AVAILABLE';
    case DLedgerCode.WAIT_QUORUM_ACK_TIMEOUT:
      // 4.9.8 hides the timeout as page-cache busy (its comment: clients ignore FLUSH_SLAVE_TIMEOUT); 5.3.3 names it.
      return semantics === '4.9.8' ? 'OS_PAGE_CACHE_BUSY' : 'IN_SYNC_REPLICAS_NOT_ENOUGH';
    case DLedgerCode.LEADER_PENDING_FULL:
      return 'OS_PAGE_CACHE_BUSY';
    default:
      // TERM_CHANGED and anything else
      return 'UNKNOWN_ERROR';
  }
}
