import type { AnyClass } from "../container/component-registry.js";
import type { Duration } from "../time/duration.js";

/** What answers a pause nobody answered before its expiry. Build one with {@link ExpiryOutcome}. */
export type ExpiryOutcome =
  | { readonly kind: "reject"; readonly reason: string }
  | { readonly kind: "approve" }
  | { readonly kind: "answer"; readonly answer: unknown }
  | { readonly kind: "fail"; readonly message: string };

/**
 * The outcomes of an expiry: `reject` and `approve` for an approval role (the model reads the rejection
 * like any other), `answer` for a question role (a value of its `answer` DTO, checked at `createApp`),
 * and `fail` for either (the waiting agent fails with a `PauseExpiredError`, code `pause.expired`).
 *
 * @example
 * expire: { after: days(3), outcome: ExpiryOutcome.reject("nobody approved it within three days") }
 */
export const ExpiryOutcome = Object.freeze({
  /** Rejects the call; the model reads `Tool error: the call was rejected: … expired: <reason>`. */
  reject: (reason: string): ExpiryOutcome => Object.freeze({ kind: "reject", reason }),
  /** Approves the call as it was asked. */
  approve: (): ExpiryOutcome => Object.freeze({ kind: "approve" }),
  /** Answers a question role's pause with `answer` (a value of the role's `answer` DTO). */
  answer: (answer: unknown): ExpiryOutcome => Object.freeze({ kind: "answer", answer }),
  /** Fails the waiting step with a `PauseExpiredError` carrying `message`. */
  fail: (message: string): ExpiryOutcome => Object.freeze({ kind: "fail", message }),
});

/**
 * When a question nobody answers is acted on, counted on the application's Clock from when it was
 * asked. Declared on a `@ChannelRole` (`deadlines`); a `@Tool` may override each field for its calls.
 * The recovery sweep acts on each deadline once across instances; a deadline can be late by up to one
 * sweep (30 s), never early.
 *
 * @example
 * deadlines: {
 *   remindEvery: days(1),
 *   escalate: { after: days(2), to: FinanceManagerApprovalChannel },
 *   expire: { after: days(3), outcome: ExpiryOutcome.reject("no answer in three days") },
 * }
 */
export interface PauseDeadlines {
  /** Reminds the role (its implementation's `remind`) this often while nobody answers. */
  readonly remindEvery?: Duration | undefined;
  /**
   * After this long, the question is withdrawn from this role (its `withdraw` is told, resolution
   * `escalated`) and asked of `to`, another `@ChannelRole` that can answer the same tool, with its own
   * deadlines counted from then.
   */
  readonly escalate?: { readonly after: Duration; readonly to: AnyClass } | undefined;
  /** After this long, the pause is resolved with `outcome` (resolution `expired`) and the tree goes on. */
  readonly expire?: { readonly after: Duration; readonly outcome: ExpiryOutcome } | undefined;
}
