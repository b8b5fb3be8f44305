import { AgbossError } from "../errors/agboss-error.js";
import { ErrorCode } from "../errors/error-codes.js";
import type { ChatResponse } from "../models/chat-model.js";

/**
 * A model answered with a PII token that stands for no value it was given. Its answer is declined:
 * a reply interpreter's is unreadable (the pause keeps waiting), an agent's model reads a tool error.
 */
export class PiiUnknownTokenError extends AgbossError {
  static override readonly kind: string = "PiiUnknownTokenError";
  /** The tokens no map knows. */
  readonly tokens: readonly string[];
  /** The answer, known tokens revealed and unknown ones left as they were. */
  readonly response: ChatResponse;

  constructor(tokens: readonly string[], response: ChatResponse, caller: string) {
    super(
      ErrorCode.PiiUnknownToken,
      `The model of ${caller} answered with ${tokens.join(", ")}, which stand${tokens.length === 1 ? "s" : ""} for no value it was given; its answer is declined. Use only the tokens that appear in the input.`,
    );
    this.tokens = Object.freeze([...tokens]);
    this.response = response;
  }
}
