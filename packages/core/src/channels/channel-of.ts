import type { ChannelAsk, ChannelReminder, ChannelWithdrawal } from "./channel-ask.js";
import type { ChannelOutcome } from "./channel-outcome.js";

/** What a concrete `@Channel` implements. `withdraw` is optional. */
export interface ChannelHandler<TRole = unknown> {
  /** Asks the question; returns `ChannelOutcome.awaitReply()` or `ChannelOutcome.decided(…)`. */
  send(ask: ChannelAsk<TRole>): Promise<ChannelOutcome<TRole>>;
  /** Takes back a question whose pause closed without an answer. Called once, best effort. */
  withdraw?(withdrawal: ChannelWithdrawal<TRole>): Promise<void>;
  /** Reminds whoever was asked of a question still unanswered at its role's `remindEvery`. Best effort. */
  remind?(reminder: ChannelReminder<TRole>): Promise<void>;
}

/**
 * The base of a channel role: an abstract class decorated with `@ChannelRole`, which implementations
 * extend and decorate with `@Channel`. `TAsk` (the `approves` or `ask` DTO) and, for a question role,
 * `TAnswer` (its `answer` DTO) are optional: given, they type `ask.value.arguments` in `send`,
 * `ChannelOutcome.answered<Role>(…)` and `app.resume<Role>({ answer })` without generated types, and
 * `@ChannelRole` refuses DTOs that differ from them (a compile error).
 *
 * @example
 * @ChannelRole({ name: "refund-approval-channel", description: "Approves refunds", approves: RefundDto, answeredBy: PauseAnswerer.Channel })
 * export abstract class RefundApprovalChannel extends ChannelOf<RefundApprovalChannel, RefundDto> {}
 */
export abstract class ChannelOf<TSelf, TAsk = unknown, TAnswer = unknown> implements ChannelHandler<TSelf> {
  /** Type-only: what the role asks about and is answered with; `unknown` when not given. */
  declare readonly __agbossTypes?: { readonly input: TAsk; readonly output: TAnswer };

  /** Asks the question. */
  abstract send(ask: ChannelAsk<TSelf>): Promise<ChannelOutcome<TSelf>>;

  /** Takes back a question; a no-op unless an implementation overrides it. */
  withdraw(_withdrawal: ChannelWithdrawal<TSelf>): Promise<void> {
    return Promise.resolve();
  }

  /** Reminds whoever was asked of an unanswered question; a no-op unless an implementation overrides it. */
  remind(_reminder: ChannelReminder<TSelf>): Promise<void> {
    return Promise.resolve();
  }
}
