import type { PendingPause } from "../pauses/pending-pause.js";
import type { ExecutionOutput } from "./execution-output.js";

/** Fields every execution event carries. */
export interface ExecutionEventBase {
  readonly tenantId: string;
  readonly threadId: string;
  readonly executionId: string;
  readonly workflow: string;
  /** ISO 8601 on the application's Clock. */
  readonly at: string;
}

/** `onExecutionStart(event)`: an execution began. */
export type ExecutionStartEvent = ExecutionEventBase & { readonly input: unknown };
/** `onExecutionFinish(event)`: an execution completed. */
export type ExecutionFinishEvent = ExecutionEventBase & { readonly output: ExecutionOutput };
/** `onExecutionError(event)`: an execution failed. */
export type ExecutionErrorEvent = ExecutionEventBase & { readonly error: unknown };

/** `onExecutionPause(event)`: the execution rests because nothing else can move. */
export type ExecutionPauseEvent = ExecutionEventBase & { readonly pending: readonly PendingPause[] };
/** `onExecutionResume(event)`: a pause was answered through `app.resume`. */
export type ExecutionResumeEvent = ExecutionEventBase & {
  /** The answered pause's id; undefined for a Channel pause. */
  readonly pauseId: string | undefined;
  /** The `ownerId` / `answeredBy` that answered. */
  readonly answeredBy: string;
};

/** Methods an `@Application` class may define to hear about executions. */
export interface ExecutionEvents {
  onExecutionPause?(event: ExecutionPauseEvent): void | Promise<void>;
  onExecutionResume?(event: ExecutionResumeEvent): void | Promise<void>;
  onExecutionStart?(event: ExecutionStartEvent): void | Promise<void>;
  onExecutionFinish?(event: ExecutionFinishEvent): void | Promise<void>;
  onExecutionError?(event: ExecutionErrorEvent): void | Promise<void>;
}
