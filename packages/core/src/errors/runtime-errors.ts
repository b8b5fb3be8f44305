import { AgbossError } from "./agboss-error.js";
import { ErrorCode } from "./error-codes.js";

/** A tool ran past its timeout on the application's Clock. */
export class ToolTimeoutError extends AgbossError {
  static override readonly kind: string = "ToolTimeoutError";
  constructor(tool: string, timeoutMs: number) {
    super(
      ErrorCode.ToolTimeout,
      `Tool "${tool}" did not finish within ${timeoutMs} ms; its signal was aborted.`,
    );
  }
}

/** No model provider serves a model id. */
export class ModelUnservedError extends AgbossError {
  static override readonly kind: string = "ModelUnservedError";
  constructor(modelId: string, caller: string) {
    super(
      ErrorCode.ModelUnserved,
      `No @ModelProvider serves model "${modelId}" (asked by ${caller}). Add a provider whose "serves" matches it to @Application({ providers }).`,
    );
  }
}

/** The thread is being moved by another call, or rests paused. */
export class ThreadBusyError extends AgbossError {
  static override readonly kind: string = "ThreadBusyError";
  constructor(threadId: string, reason: string) {
    super(ErrorCode.ThreadBusy, `Thread "${threadId}" cannot take a new execution: ${reason}`);
  }
}

/** The caller is not the thread's owner. */
export class ThreadOwnerError extends AgbossError {
  static override readonly kind: string = "ThreadOwnerError";
  constructor(threadId: string) {
    super(
      ErrorCode.ThreadOwner,
      `Only the owner of thread "${threadId}" may do this; pass the ownerId the thread was started with.`,
    );
  }
}

/** The execution was cancelled with `app.cancel`. */
export class ExecutionCancelledError extends AgbossError {
  static override readonly kind: string = "ExecutionCancelledError";
  constructor(threadId: string) {
    super(ErrorCode.ExecutionCancelled, `The execution on thread "${threadId}" was cancelled.`);
  }
}

/** A start chose an `executionId` the tenant already has: it ran nothing. */
export class ExecutionIdTakenError extends AgbossError {
  static override readonly kind: string = "ExecutionIdTakenError";
  readonly executionId: string;
  constructor(executionId: string) {
    super(
      ErrorCode.ExecutionIdTaken,
      `An execution "${executionId}" already exists; nothing was started. Read it with app.record, or start with another executionId.`,
    );
    this.executionId = executionId;
  }
}

/** The application was closed. */
export class AppClosedError extends AgbossError {
  static override readonly kind: string = "AppClosedError";
  constructor() {
    super(ErrorCode.AppClosed, "The application was closed; create a new one with createApp(…).");
  }
}

/** Code that reads the ExecutionContext ran outside an execution. */
export class NoExecutionContextError extends AgbossError {
  static override readonly kind: string = "NoExecutionContextError";
  constructor(field: string) {
    super(
      ErrorCode.NoExecutionContext,
      `ExecutionContext.${field} was read outside an execution. Read it inside a tool's run, a channel's send or an interpreter, not in a constructor or onInit.`,
    );
  }
}

/** A channel's method (a withdrawal, say) did not return within its tool's timeout on the Clock. */
export class ChannelTimeoutError extends AgbossError {
  static override readonly kind: string = "ChannelTimeoutError";
  constructor(channel: string, method: string, timeoutMs: number) {
    super(
      ErrorCode.ChannelTimeout,
      `Channel "${channel}" did not return from ${method} within ${timeoutMs} ms; it was given up on. ` +
        "Make the channel's call faster, or raise the tool's timeout.",
    );
  }
}
