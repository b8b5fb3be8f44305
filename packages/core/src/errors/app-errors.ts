import { AgbossError, hasCause } from "./agboss-error.js";
import { ErrorCode } from "./error-codes.js";

/** `app.execute` was given a class that starts none of the application's flows. */
export class UnknownWorkflowStartError extends AgbossError {
  static override readonly kind: string = "UnknownWorkflowStartError";
  constructor(start: string, known: readonly string[]) {
    super(
      ErrorCode.WorkflowUnknown,
      `${start} starts none of this application's flows. Known starts: ${known.join(", ") || "none"}. ` +
        "Add its workflow to @Application({ workflows }).",
    );
  }
}

/** The store could not be opened. */
export class StoreUnavailableError extends AgbossError {
  static override readonly kind: string = "StoreUnavailableError";
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(ErrorCode.StoreUnavailable, message, options);
  }
}

/** Whether an error is (or was caused by) the store out of reach: a fault of the infrastructure, not of the work. */
export function isStoreFault(error: unknown): boolean {
  return hasCause(error, StoreUnavailableError);
}

/** A reply interpreter's `promptUrls` could not be read when the application started. */
export class InterpreterPromptError extends AgbossError {
  static override readonly kind: string = "InterpreterPromptError";
  readonly interpreter: string;
  readonly url: string;
  constructor(interpreter: string, url: string, cause: unknown) {
    super(
      ErrorCode.InterpreterPromptUnreadable,
      `Reply interpreter "${interpreter}" could not read its instructions from "${url}": ${
        cause instanceof Error ? cause.message : String(cause)
      }. Check the path (relative to the working directory) or URL in its promptUrls.`,
      { cause },
    );
    this.interpreter = interpreter;
    this.url = url;
  }
}
