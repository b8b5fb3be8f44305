/**
 * One execution as the store keeps it. `record` is the execution record (JSON); the store treats it as
 * opaque data and indexes the columns beside it.
 */
export interface StoredExecution {
  readonly tenantId: string;
  readonly executionId: string;
  /** The root of the execution tree (itself for a root execution). */
  readonly rootExecutionId: string;
  /** The parent execution of a child workflow; undefined for a root. */
  readonly parentExecutionId: string | undefined;
  readonly threadId: string;
  readonly workflowName: string;
  /** An {@link ExecutionStatus} value. */
  readonly status: string;
  readonly startedAt: number;
  readonly updatedAt: number;
  /** The execution record, JSON-serialisable. */
  readonly record: unknown;
}

/** One entry of the audit trail: a pause of the tree, written once when it resolved. */
export interface StoredPauseAnswer {
  readonly tenantId: string;
  readonly rootExecutionId: string;
  /** The pause record's key: one entry per pause. */
  readonly idempotencyKey: string;
  /** When the pause was asked: entries read back in this order. */
  readonly askedAt: number;
  /** The entry as the execution record shows it, JSON-serialisable. */
  readonly answer: unknown;
}
