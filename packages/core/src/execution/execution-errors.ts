import { AgbossError } from "../errors/agboss-error.js";
import { ErrorCode } from "../errors/error-codes.js";
import type { ExecutionRecord } from "../records/execution-record.js";
import { ExecutionStatus } from "../records/execution-status.js";

/** The tree another pass moved ended in failure or was cancelled; the decision was recorded but no step took it. */
export class ExecutionEndedError extends AgbossError {
  static override readonly kind: string = "ExecutionEndedError";
  readonly executionId: string;
  readonly status: ExecutionStatus;
  /** `while` says what this call was doing: waiting with an answer (the default), or running the tree. */
  constructor(
    executionId: string,
    status: ExecutionStatus,
    error: ExecutionRecord["error"],
    options: { readonly while?: "answering" | "running" } = {},
  ) {
    const ended = status === ExecutionStatus.Cancelled ? "was cancelled" : "failed";
    const cause = error === undefined ? "" : `: ${error.message}`;
    super(
      status === ExecutionStatus.Cancelled ? ErrorCode.ExecutionCancelled : ErrorCode.ExecutionFailed,
      options.while === "running"
        ? `Execution ${executionId} ${ended} in another call (another instance took it over) while this call ran it${cause}. Nothing more will run.`
        : `Execution ${executionId} ${ended} in another call while this answer waited for it${cause}. The answer was recorded; nothing more will run.`,
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

/**
 * The caller's `AbortSignal` stopped the call. Nothing failed: an execution it stopped mid-way stays
 * recorded as running and its lease is released, so the recovery sweep of any instance carries it on
 * from its last checkpoint (a step cut off mid-way runs again), or `app.cancel(threadId)` ends it. A
 * start stopped before its first step was stored has nothing to carry on: it is recorded as cancelled.
 * A signal aborted before the call recorded anything leaves nothing behind (`executionId` undefined).
 * `cause` is the signal's reason.
 */
export class ExecutionAbortedError extends AgbossError {
  static override readonly kind: string = "ExecutionAbortedError";
  /** The execution the signal stopped; undefined when it was aborted before anything was recorded. */
  readonly executionId: string | undefined;
  readonly threadId: string | undefined;
  constructor(
    args:
      | {
          readonly executionId: string;
          readonly threadId: string;
          readonly reason: unknown;
          /** Stopped before its first step was stored: recorded as cancelled, nothing to carry on. */
          readonly beforeFirstStep?: boolean;
        }
      | { readonly call: string; readonly reason: unknown },
  ) {
    super(
      ErrorCode.ExecutionAborted,
      "call" in args
        ? `${args.call} was called with an abort signal that was already aborted; nothing was recorded or run.`
        : args.beforeFirstStep === true
          ? `Execution ${args.executionId} on thread "${args.threadId}" was stopped by its caller's abort signal before its first step was stored: ` +
            "there is nothing to carry on from, and it is recorded as cancelled. Start it again with app.execute."
          : `Execution ${args.executionId} on thread "${args.threadId}" was stopped by its caller's abort signal. ` +
            "It was not ended: the recovery sweep carries it on from its last checkpoint, or end it with app.cancel(threadId).",
      args.reason === undefined ? {} : { cause: args.reason },
    );
    this.executionId = "call" in args ? undefined : args.executionId;
    this.threadId = "call" in args ? undefined : args.threadId;
  }
}

/** `app.follow` was given a thread or an execution the tenant does not have. */
export class ExecutionUnknownError extends AgbossError {
  static override readonly kind: string = "ExecutionUnknownError";
  constructor(target: { readonly threadId: string } | { readonly executionId: string }, tenantId: string) {
    super(
      ErrorCode.ExecutionUnknown,
      "threadId" in target
        ? `Tenant "${tenantId}" has no thread "${target.threadId}" with an execution to follow.`
        : `Tenant "${tenantId}" has no execution "${target.executionId}" to follow.`,
    );
  }
}
