import type { DeclaredTypeOr } from "../container/component-types.js";
import type { ToolCallApprovalDecisionDto } from "./approval-dtos.js";

const OUTCOME = Symbol.for("agboss.channel-outcome");

/** What a channel keeps to find a question again: JSON (a string, a number, a record of them…). */
export type ChannelRef =
  | string
  | number
  | boolean
  | null
  | readonly ChannelRef[]
  | { readonly [key: string]: ChannelRef };

/** The most JSON a channel may keep on a pause as its `ref`. */
export const MAX_CHANNEL_REF_BYTES = 4096;

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
  /** For `await-reply`: what the channel keeps to find its question again, handed back on withdraw. */
  readonly ref: ChannelRef | undefined;

  private constructor(
    kind: "await-reply" | "decided" | "answered",
    decision: ToolCallApprovalDecisionDto | undefined,
    answer?: unknown,
    ref?: ChannelRef,
  ) {
    this.kind = kind;
    this.decision = decision;
    this.answer = answer;
    this.ref = ref;
    void this.#brand;
  }

  /**
   * The question was posted; the call pauses until `app.resume` answers it by its pauseId. `ref` is
   * kept on the pause and handed back in `withdraw` (a chat message's id, say), so the channel can
   * take the question back without searching for it. At most 4 KB of JSON.
   *
   * @example
   * return ChannelOutcome.awaitReply({ ref: { channel: posted.channel, ts: posted.ts } });
   */
  static awaitReply<TRole = unknown>(options: { readonly ref?: ChannelRef } = {}): ChannelOutcome<TRole> {
    return new ChannelOutcome<TRole>("await-reply", undefined, undefined, options.ref);
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
