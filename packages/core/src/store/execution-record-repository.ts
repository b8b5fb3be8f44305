import type { Fence } from "./fence.js";
import type { StoredExecution, StoredPauseAnswer } from "./stored-execution.js";

/** Execution records and the audit trail of their pauses: the permanent history. */
export interface ExecutionRecordRepository {
  /**
   * Inserts the execution or replaces the stored one with the same (tenantId, executionId). An
   * execution's thread, root, parent, workflow and start are fixed when it is first saved: a later save
   * carries the same values, and a store may keep the stored ones (the SQL stores do not rewrite the
   * thread and start, so their thread index is not rewritten on every save). With a
   * fence, the write is refused with `LeaseLostError` once a newer holder took the tree's lease, in the
   * same transaction: a holder that lost its tree cannot overwrite how another one left it.
   *
   * With `release` (and a fence), the lease the fence names is released in that same transaction, after
   * the record is written: a pass's last write, so the record and the lease's release land together or
   * not at all (a release may not land first, and a lost one does not keep the tree 30 s).
   */
  save(execution: StoredExecution, fence?: Fence, options?: { readonly release?: boolean }): Promise<void>;
  /** The execution, or undefined. */
  findByTenantIdAndExecutionId(tenantId: string, executionId: string): Promise<StoredExecution | undefined>;
  /** A thread's executions, oldest first. */
  listByTenantIdAndThreadId(tenantId: string, threadId: string): Promise<StoredExecution[]>;
  /**
   * Executions whose status is one of `statuses`, on any tenant, oldest update first (ties by tenantId,
   * then executionId), at most `limit`; with `after`, only those that come after it in that order (the
   * sweep pages through them this way, so rows it cannot take never hide the ones behind them). Each
   * without its record: the sweep needs only the keys, and a page of records to throw away would cost
   * a store with a backlog of running executions a collection per page.
   */
  listByStatus(
    statuses: readonly string[],
    limit: number,
    after?: { readonly updatedAt: number; readonly tenantId: string; readonly executionId: string },
  ): Promise<Omit<StoredExecution, "record">[]>;
  /** Writes a pause's audit entry; a second write for the same (tenantId, idempotencyKey) is ignored. */
  savePauseAnswer(tenantId: string, rootExecutionId: string, answer: StoredPauseAnswer): Promise<void>;
  /** Every audit entry of a tree, in the order the pauses were asked. */
  findPauseAnswersByTenantIdAndRootExecutionId(
    tenantId: string,
    rootExecutionId: string,
  ): Promise<StoredPauseAnswer[]>;
}
