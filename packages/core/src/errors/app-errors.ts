import { AgbossError } from "./agboss-error.js";
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
