import type { StoredExecution, StoredPauseAnswer } from "./stored-execution.js";

/** Execution records and the audit trail of their pauses: the permanent history. */
export interface ExecutionRecordRepository {
  /** Inserts the execution or replaces the stored one with the same (tenantId, executionId). */
  save(execution: StoredExecution): Promise<void>;
  /** The execution, or undefined. */
  findByTenantIdAndExecutionId(tenantId: string, executionId: string): Promise<StoredExecution | undefined>;
  /** A thread's executions, oldest first. */
  listByTenantIdAndThreadId(tenantId: string, threadId: string): Promise<StoredExecution[]>;
  /** Executions whose status is one of `statuses`, on any tenant, oldest update first (the sweep). */
  listByStatus(statuses: readonly string[], limit: number): Promise<StoredExecution[]>;
  /** Writes a pause's audit entry; a second write for the same (tenantId, idempotencyKey) is ignored. */
  savePauseAnswer(tenantId: string, rootExecutionId: string, answer: StoredPauseAnswer): Promise<void>;
  /** Every audit entry of a tree, in the order the pauses were asked. */
  findPauseAnswersByTenantIdAndRootExecutionId(
    tenantId: string,
    rootExecutionId: string,
  ): Promise<StoredPauseAnswer[]>;
}
