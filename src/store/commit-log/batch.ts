// One group commit of the local commit log on its way through the writer's stages, and how its puts are answered.
// Java: CommitLog.asyncPutMessage / handleDiskFlushAndHA combine the flush future and the replica future
// (thenCombine) and answer when both are done; the replica's failure wins over the flush's.
import type { PutResult, PutStatus } from '../types.js';
import type { WrittenRecord } from './port.js';
import type { Segment } from '../segment.js';

export interface WriteOp {
  seg: Segment;
  filePos: number;
  buf: Buffer;
}

export interface Waiter {
  resolve: (r: PutResult) => void;
  result: PutResult;
  /**
   * The put waits for the flush (SYNC_FLUSH) and replica (SYNC_MASTER) stages (Java isWaitStoreMsgOK: the WAIT
   * property, true unless "false"); false = answered PUT_OK once written and dispatched.
   */
  waits: boolean;
}

/** Everything appended since the writer's previous turn. */
export interface Batch {
  ops: WriteOp[];
  waiters: Waiter[];
  entries: WrittenRecord[];
  endOffset: number;
  bytes: number;
  storeTimestamp: number;
  /** How many waiters wait for the stages (WAIT=true). */
  waiting: number;
  flushStatus: PutStatus;
  replicaStatus: PutStatus;
  /** Stages (flush, replica) that have not reported yet. */
  pendingStages: number;
  /** The records went to the consume queues and index (they are visible to pulls). */
  dispatched: boolean;
  /** The waiting puts have been answered (a stage may answer them before dispatch when it failed). */
  answered: boolean;
}

export function newBatch(
  ops: WriteOp[], waiters: Waiter[], entries: WrittenRecord[], endOffset: number, bytes: number, storeTimestamp: number,
  waiting: number,
): Batch {
  return {
    ops, waiters, entries, endOffset, bytes, storeTimestamp, waiting, flushStatus: 'PUT_OK', replicaStatus: 'PUT_OK',
    pendingStages: 0, dispatched: false, answered: false,
  };
}

/**
 * Java CommitLog.handleDiskFlushAndHA: each stage's non-OK status replaces the outcome so far (a later stage's
 * failure wins over an earlier one's).
 */
export function mergePutStatus(current: PutStatus, stage: PutStatus): PutStatus {
  return stage === 'PUT_OK' ? current : stage;
}

/** The merged outcome of the stages: flush first, then replica (whose failure wins). */
export function batchStatus(batch: Batch): PutStatus {
  return mergePutStatus(mergePutStatus('PUT_OK', batch.flushStatus), batch.replicaStatus);
}

/** A stage the waiting puts must hear from before they are answered. */
export function stageStarted(batch: Batch): void {
  batch.pendingStages++;
}

/**
 * A stage reports its status (once). The waiting puts are answered when no stage is pending, and either the
 * records are dispatched or the outcome is a failure (a timeout answers at once, as before the records show).
 */
export function stageReported(batch: Batch, stage: 'flush' | 'replica', status: PutStatus): void {
  if (stage === 'flush') batch.flushStatus = status;
  else batch.replicaStatus = status;
  batch.pendingStages--;
  if (batch.pendingStages === 0 && (batch.dispatched || batchStatus(batch) !== 'PUT_OK')) answerWaiting(batch);
}

/** The records are dispatched: puts that do not wait are answered, the others too unless a stage is pending. */
export function batchDispatched(batch: Batch): void {
  batch.dispatched = true;
  if (batch.waiting === 0) {
    // No put waits (all WAIT=false): nothing to look at per waiter, no status to merge.
    batch.answered = true;
    for (const w of batch.waiters) w.resolve(w.result);
    return;
  }
  if (batch.waiting < batch.waiters.length) {
    for (const w of batch.waiters) if (!w.waits) w.resolve(w.result);
  }
  if (batch.pendingStages === 0) answerWaiting(batch);
}

function answerWaiting(batch: Batch): void {
  if (batch.answered) return;
  batch.answered = true;
  const status = batchStatus(batch);
  for (const w of batch.waiters) {
    if (!w.waits) continue;
    if (status !== 'PUT_OK') w.result.status = status;
    w.resolve(w.result);
  }
}
