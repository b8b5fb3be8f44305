import type { ChildSummary } from "../graph/flow-state.js";
import type { ChildExecutionRecord, ExecutionRecord } from "../records/execution-record.js";
import { ExecutionStatus } from "../records/execution-status.js";
import type { PauseEntry } from "../records/pause-entry.js";

/** The records of finished child executions, each with the pauses its own steps asked. @internal */
export function childRecords(
  summaries: readonly ChildSummary[],
  pauses: readonly PauseEntry[],
): ChildExecutionRecord[] {
  return summaries.map((child) => ({
    executionId: child.executionId,
    parentExecutionId: child.parentExecutionId,
    workflow: child.workflow,
    start: child.start,
    status: ExecutionStatus.Completed,
    itemIndex: child.itemIndex,
    output: child.output,
    steps: child.steps,
    pauses: pauses.filter((p) => p.executionId === child.executionId),
    children: childRecords(child.children, pauses),
  }));
}

/** Stored child records with their pauses read again from the audit trail. @internal */
export function withPauses(
  children: readonly ChildExecutionRecord[],
  pauses: readonly PauseEntry[],
): ChildExecutionRecord[] {
  return children.map((child) => ({
    ...child,
    pauses: pauses.filter((p) => p.executionId === child.executionId),
    children: withPauses(child.children, pauses),
  }));
}

/** A stored execution record with the audit trail read again, its children's pauses too. @internal */
export function withAuditTrail(record: ExecutionRecord, pauses: readonly PauseEntry[]): ExecutionRecord {
  return { ...record, pauses, children: withPauses(record.children ?? [], pauses) };
}
