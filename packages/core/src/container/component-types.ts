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

/**
 * What `T` declares under `K` (its `__agbossTypes` phantom, from a generated declaration or a typed
 * base such as `ChannelOf<Self, Ask, Answer>`), else `TFallback`. A class without the phantom, one
 * that declares `unknown` there (a base's default), `unknown` and any other type get the fallback.
 */
export type DeclaredTypeOr<T, K extends "input" | "output", TFallback> = T extends {
  readonly __agbossTypes?: infer D;
}
  ? NonNullable<D> extends { readonly [P in K]: infer V }
    ? unknown extends V
      ? TFallback
      : V
    : TFallback
  : TFallback;
