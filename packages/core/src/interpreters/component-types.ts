import type { ToolCallApprovalDecisionDto } from "../channels/approval-dtos.js";
import type { ChannelAskValue } from "../channels/channel-ask.js";
import type { ReplyInterpretation } from "./reply-interpretation.js";

/** What a reply interpreter reads: the pause's original question and the person's words. */
export interface ReplyInterpreterInput<TArguments = Record<string, unknown>> {
  /** The question as the channel was asked it (the real arguments, not masked). */
  readonly ask: ChannelAskValue<unknown> & { readonly arguments: TArguments };
  /** The reply, as the webhook passed it. */
  readonly reply: string;
}

/**
 * The phantom a generated `.agboss/types.d.ts` merges into a component class, so `InputOf` and
 * `OutputOf` know its exact types (a role's approved DTO, say). Without it the defaults apply.
 *
 * @example
 * declare module "./refund-reply.interpreter.js" {
 *   interface RefundReplyInterpreter {
 *     readonly __agbossTypes?: { input: ReplyInterpreterInput<RefundCardInputDto>; output: ToolCallApprovalDecisionDto };
 *   }
 * }
 */
export interface ComponentTypes<TInput, TOutput> {
  readonly __agbossTypes?: { readonly input: TInput; readonly output: TOutput };
}

type Declared<T, K extends "input" | "output"> = T extends { readonly __agbossTypes?: infer D }
  ? D extends { readonly [P in K]: infer V }
    ? V
    : undefined
  : undefined;

/** What a component takes: a tool's input, an interpreter's `{ ask, reply }`. */
export type InputOf<T> =
  Declared<T, "input"> extends undefined
    ? T extends { run(input: infer I): unknown }
      ? I
      : ReplyInterpreterInput
    : Declared<T, "input">;

/** What a component gives: a tool's output, an interpreter's decision. */
export type OutputOf<T> =
  Declared<T, "output"> extends undefined
    ? T extends { run(input: never): infer O }
      ? Awaited<O>
      : ToolCallApprovalDecisionDto
    : Declared<T, "output">;

/** What a `DecidedBy.Code` interpreter implements. `interpret` may be sync or async; a throw counts as unreadable. */
export interface ReplyInterpreterHandler<TSelf> {
  interpret(
    input: InputOf<TSelf>,
  ): ReplyInterpretation<OutputOf<TSelf>> | Promise<ReplyInterpretation<OutputOf<TSelf>>>;
}
