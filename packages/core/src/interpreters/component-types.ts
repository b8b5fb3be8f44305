import type { ToolCallApprovalDecisionDto } from "../channels/approval-dtos.js";
import type { ChannelAskValue } from "../channels/channel-ask.js";
import type { DeclaredTypeOr } from "../container/component-types.js";
import type { ReplyInterpretation } from "./reply-interpretation.js";

/** What a reply interpreter reads: the pause's original question and the person's words. */
export interface ReplyInterpreterInput<TArguments = Record<string, unknown>> {
  /**
   * The question as the channel was asked it (the real arguments, not masked). `arguments` is the
   * role's approved DTO when generated types declare it; no other field is allowed then.
   */
  readonly ask: Omit<ChannelAskValue<unknown>, "arguments"> & { readonly arguments: TArguments };
  /** The reply, as the webhook passed it. */
  readonly reply: string;
}

/** What a component takes: a tool's input, an interpreter's `{ ask, reply }`. */
export type InputOf<T> = DeclaredTypeOr<
  T,
  "input",
  T extends { run(input: infer I): unknown } ? I : ReplyInterpreterInput
>;

/** What a component gives: a tool's output, an interpreter's decision. */
export type OutputOf<T> = DeclaredTypeOr<
  T,
  "output",
  T extends { run(input: never): infer O } ? Awaited<O> : ToolCallApprovalDecisionDto
>;

/**
 * What a `DecidedBy.Code` interpreter implements. `interpret` may be sync or async; a throw counts as
 * unreadable. `TAnswer` is what it reads a reply as: by default its `OutputOf` (the generated types'
 * answer, else a decision); a question role's interpreter without generated types names the role's
 * answer DTO here.
 *
 * @example
 * export class AmountReplyInterpreter implements ReplyInterpreterHandler<AmountReplyInterpreter, RefundAmountDto> { … }
 */
export interface ReplyInterpreterHandler<TSelf, TAnswer = OutputOf<TSelf>> {
  interpret(input: InputOf<TSelf>): ReplyInterpretation<TAnswer> | Promise<ReplyInterpretation<TAnswer>>;
}
