import type { DeclaredTypeOr } from "../container/component-types.js";
import type { PauseKind, PauseWithdrawalResolution } from "../pauses/pause-status.js";
import type { ChannelRef } from "./channel-outcome.js";

/**
 * The arguments of the tool call a role approves: the role's `approves` DTO when a generated
 * `.agboss/types.d.ts` declares it (the role's `__agbossTypes` input), else any record.
 */
// biome-ignore lint/suspicious/noExplicitAny: without generated types the role's approves DTO is not known here
export type ApprovalArguments<TRole> = DeclaredTypeOr<TRole, "input", Record<string, any>>;

/** The question as the channel receives it. */
export interface ChannelAskValue<TRole> {
  /** The tool's name. */
  readonly tool: string;
  /** The agent that called it. */
  readonly agent: string;
  /** The model's id for the call. */
  readonly callId: string;
  /** The call's arguments, as the tool would get them. */
  readonly arguments: ApprovalArguments<TRole>;
}

/** What a channel's `send` gets. */
export interface ChannelAsk<TRole = unknown> {
  /** The pause's id: what `app.resume` takes, and a safe idempotency key (a retried send gets the same one). */
  readonly pauseId: string;
  /** `approval` (the person approves or rejects the call) or `question` (they give the role's answer DTO). */
  readonly kind: PauseKind;
  readonly value: ChannelAskValue<TRole>;
}

/** What a channel's `withdraw` gets when a pause it sent closes without an answer. */
export interface ChannelWithdrawal<TRole = unknown> {
  readonly pauseId: string;
  /** What the question asked for: `approval` or `question`. */
  readonly kind: PauseKind;
  /** The value it was sent. */
  readonly value: ChannelAskValue<TRole>;
  /**
   * Withdrawn (made obsolete), Cancelled (app.cancel, the tree ended), Escalated (its deadline asked
   * another role instead) or Expired (its deadline answered it).
   */
  readonly resolution: PauseWithdrawalResolution;
  /** What the channel's `send` kept with `ChannelOutcome.awaitReply({ ref })`; undefined when it kept nothing. */
  readonly ref?: ChannelRef | undefined;
}

/** What a channel's `remind` gets when a question it sent is still unanswered at its role's `remindEvery`. */
export interface ChannelReminder<TRole = unknown> {
  readonly pauseId: string;
  /** What the question asks for: `approval` or `question`. */
  readonly kind: PauseKind;
  /** The value it was sent. */
  readonly value: ChannelAskValue<TRole>;
  /** Which reminder this is: 1 for the first. */
  readonly reminder: number;
  /** When the question was asked (ISO 8601, the application's Clock). */
  readonly askedAt: string;
  /** What the channel's `send` kept with `ChannelOutcome.awaitReply({ ref })`; undefined when it kept nothing. */
  readonly ref?: ChannelRef | undefined;
}
