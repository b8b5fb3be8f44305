import { AgbossError } from "../errors/agboss-error.js";
import { ErrorCode } from "../errors/error-codes.js";
import type { ExecutionRecord } from "../records/execution-record.js";
import { ExecutionStatus } from "../records/execution-status.js";

/** The tree another pass moved ended in failure or was cancelled; the decision was recorded but no step took it. */
export class ExecutionEndedError extends AgbossError {
  static override readonly kind: string = "ExecutionEndedError";
  readonly executionId: string;
  readonly status: ExecutionStatus;
  constructor(executionId: string, status: ExecutionStatus, error: ExecutionRecord["error"]) {
    super(
      status === ExecutionStatus.Cancelled ? ErrorCode.ExecutionCancelled : ErrorCode.ExecutionFailed,
      `Execution ${executionId} ${status === ExecutionStatus.Cancelled ? "was cancelled" : "failed"} in another call while this answer waited for it` +
        `${error === undefined ? "" : `: ${error.message}`}. The answer was recorded; nothing more will run.`,
    );
    this.executionId = executionId;
    this.status = status;
  }
}

/**
 * An execution was recorded as started, but its process died before its first step was stored: there is
 * nothing to continue from. Start it again with `app.execute` (its input is in the record, masked).
 */
export class ExecutionInterruptedError extends AgbossError {
  static override readonly kind: string = "ExecutionInterruptedError";
  readonly executionId: string;
  constructor(executionId: string) {
    super(
      ErrorCode.ExecutionInterrupted,
      `Execution ${executionId} was interrupted before its first step was stored (its process stopped at ` +
        "the start); nothing ran. Start it again with app.execute.",
    );
    this.executionId = executionId;
  }
}
