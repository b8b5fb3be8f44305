import type { ChannelAsk, ChannelWithdrawal } from "./channel-ask.js";
import type { ChannelOutcome } from "./channel-outcome.js";

/** What a concrete `@Channel` implements. `withdraw` is optional. */
export interface ChannelHandler<TRole = unknown> {
  /** Asks the question; returns `ChannelOutcome.awaitReply()` or `ChannelOutcome.decided(…)`. */
  send(ask: ChannelAsk<TRole>): Promise<ChannelOutcome<TRole>>;
  /** Takes back a question whose pause closed without an answer. Called once, best effort. */
  withdraw?(withdrawal: ChannelWithdrawal<TRole>): Promise<void>;
}

/**
 * The base of a channel role: an abstract class decorated with `@ChannelRole`, which implementations
 * extend and decorate with `@Channel`.
 *
 * @example
 * @ChannelRole({ name: "refund-approval-channel", description: "Approves refunds", approves: RefundDto, answeredBy: PauseAnswerer.Channel })
 * export abstract class RefundApprovalChannel extends ChannelOf<RefundApprovalChannel> {}
 */
export abstract class ChannelOf<TSelf> implements ChannelHandler<TSelf> {
  /** Asks the question. */
  abstract send(ask: ChannelAsk<TSelf>): Promise<ChannelOutcome<TSelf>>;

  /** Takes back a question; a no-op unless an implementation overrides it. */
  withdraw(_withdrawal: ChannelWithdrawal<TSelf>): Promise<void> {
    return Promise.resolve();
  }
}
