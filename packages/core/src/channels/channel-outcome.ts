import type { DeclaredTypeOr } from "../interpreters/component-types.js";
import type { ToolCallApprovalDecisionDto } from "./approval-dtos.js";

const OUTCOME = Symbol.for("agboss.channel-outcome");

/**
 * A question role's answer: its `answer` DTO when a generated `.agboss/types.d.ts` declares it (the
 * role's `__agbossTypes` output), else any object.
 */
export type RoleAnswer<TRole> = DeclaredTypeOr<TRole, "output", object>;

/**
 * What a channel's `send` returns: wait for an answer, or an answer given at once. Build it with
 * {@link ChannelOutcome.awaitReply}, {@link ChannelOutcome.decided} (an approval role) or
 * {@link ChannelOutcome.answered} (a question role); a plain object does not type-check.
 */
export class ChannelOutcome<_TRole = unknown> {
  readonly #brand = OUTCOME;
  /** `await-reply`, `decided` or `answered`. */
  readonly kind: "await-reply" | "decided" | "answered";
  /** The decision, for `decided`. */
  readonly decision: ToolCallApprovalDecisionDto | undefined;
  /** The answer, for `answered`. */
  readonly answer: unknown;

  private constructor(
    kind: "await-reply" | "decided" | "answered",
    decision: ToolCallApprovalDecisionDto | undefined,
    answer?: unknown,
  ) {
    this.kind = kind;
    this.decision = decision;
    this.answer = answer;
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

  /**
   * A question role's channel answered at once (a rule, a cached answer); the call never pauses. The
   * answer is validated against the role's `answer` DTO like one given through `app.resume`.
   */
  static answered<TRole = unknown>(answer: RoleAnswer<TRole>): ChannelOutcome<TRole> {
    return new ChannelOutcome<TRole>("answered", undefined, answer);
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
