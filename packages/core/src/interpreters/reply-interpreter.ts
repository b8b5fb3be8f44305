import { ComponentKind } from "../container/component-kind.js";
import { componentDecorator } from "../container/component-registry.js";

/** How a reply interpreter reads a reply. */
export const DecidedBy = {
  /** Your code reads it: the class implements `ReplyInterpreterHandler`. */
  Code: "code",
  /** A model reads it, answering through one answer tool (or, on a decision model, a yes / no). */
  Model: "model",
} as const;
export type DecidedBy = (typeof DecidedBy)[keyof typeof DecidedBy];

/** What `@ReplyInterpreter` declares. */
export interface ReplyInterpreterOptions {
  /** Ends with `-reply-interpreter`. */
  readonly name: string;
  readonly description: string;
  readonly decidedBy: DecidedBy;
  /** For `DecidedBy.Model`: the model id a `@ModelProvider` serves. */
  readonly model?: string;
  /** For `DecidedBy.Model`: the model's instructions. */
  readonly prompt?: string;
  /** For `DecidedBy.Model`: more instructions, read from files or URLs when the application starts. */
  readonly promptUrls?: readonly string[];
  /** For `DecidedBy.Code`: what the constructor takes. */
  readonly deps?: readonly unknown[];
}

/**
 * Declares a reply interpreter: it turns a person's free-text answer to a pause into a decision.
 * A channel role names it with `replyInterpreter`; one interpreter belongs to one role.
 *
 * @example
 * @ReplyInterpreter({ name: "refund-reply-interpreter", description: "Reads a manager's reply", decidedBy: DecidedBy.Code })
 * export class RefundReplyInterpreter implements ReplyInterpreterHandler<RefundReplyInterpreter> { interpret(input) { … } }
 */
export function ReplyInterpreter(options: ReplyInterpreterOptions) {
  return componentDecorator(ComponentKind.ReplyInterpreter, options);
}
