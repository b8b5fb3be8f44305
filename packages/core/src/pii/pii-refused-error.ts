import { AgbossError } from "../errors/agboss-error.js";
import { ErrorCode } from "../errors/error-codes.js";

/**
 * A model call was not made: what the model would have read holds a value a `blockWithRefusal`
 * policy forbids. The value itself is never in the message.
 */
export class PiiRefusedError extends AgbossError {
  static override readonly kind: string = "PiiRefusedError";
  /** The detector that found it, e.g. `card-number`. */
  readonly detector: string;
  /** Who was about to call a model, e.g. `reply-interpreter:refund-reply-interpreter`. */
  readonly caller: string;

  constructor(detector: string, caller: string) {
    super(
      ErrorCode.PiiRefused,
      `${caller} did not call its model: what it would read holds a value the "${detector}" detector finds, and a blockWithRefusal policy forbids sending it. Remove the value from the input, or change the policy to replaceWithToken(…).`,
    );
    this.detector = detector;
    this.caller = caller;
  }
}
