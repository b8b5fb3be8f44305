import type { ToolCallApprovalDecisionDto } from "./approval-dtos.js";

const OUTCOME = Symbol.for("agboss.channel-outcome");

/**
 * What a channel's `send` returns: wait for an answer, or a decision made at once. Build it with
 * {@link ChannelOutcome.awaitReply} or {@link ChannelOutcome.decided}; a plain object does not type-check.
 */
export class ChannelOutcome<_TRole = unknown> {
  readonly #brand = OUTCOME;
  /** `await-reply` or `decided`. */
  readonly kind: "await-reply" | "decided";
  /** The decision, for `decided`. */
  readonly decision: ToolCallApprovalDecisionDto | undefined;

  private constructor(kind: "await-reply" | "decided", decision: ToolCallApprovalDecisionDto | undefined) {
    this.kind = kind;
    this.decision = decision;
    void this.#brand;
  }

  /** The question was posted; the call pauses until `app.resume` answers it by its pauseId. */
  static awaitReply<TRole = unknown>(): ChannelOutcome<TRole> {
    return new ChannelOutcome<TRole>("await-reply", undefined);
  }

  /** The channel decided at once; the call never pauses. The decision is validated like any other. */
  static decided<TRole = unknown>(decision: ToolCallApprovalDecisionDto): ChannelOutcome<TRole> {
    return new ChannelOutcome<TRole>("decided", decision);
  }

  /** True for an outcome built by this class (in any installed copy of core). */
  static is(value: unknown): value is ChannelOutcome {
    return (
      typeof value === "object" &&
      value !== null &&
      (value as { kind?: unknown }).kind !== undefined &&
      value instanceof ChannelOutcome
    );
  }
}
