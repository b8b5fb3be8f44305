import type { PendingPause } from "../pauses/pending-pause.js";
import type { ExecutionRecord } from "../records/execution-record.js";
import type { ExecutionStatus } from "../records/execution-status.js";

/** What `app.execute` and `app.resume` return. */
export interface ExecutionOutput<TOutput = unknown> {
  readonly status: ExecutionStatus;
  /**
   * The finish's output once completed; undefined while paused. A resume that waited for the lease while
   * another call completed the execution, and found a later execution already on the thread, returns the
   * recorded output instead, with sensitive fields masked (see `app.record`).
   */
  readonly output: TOutput | undefined;
  readonly threadId: string;
  readonly executionId: string;
  /** Every waiting pause; empty unless paused. */
  readonly pending: readonly PendingPause[];
  /** Its finished child executions (workflows run as steps), each with its own pauses. */
  readonly children?: readonly import("../records/execution-record.js").ChildExecutionRecord[];
  /** The execution record, with `{ record: true }`. */
  readonly record?: ExecutionRecord;
}
