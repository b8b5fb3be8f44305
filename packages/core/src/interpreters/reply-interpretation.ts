const INTERPRETATION = Symbol.for("agboss.reply-interpretation");

/**
 * What a code interpreter's `interpret` returns: the decision it read, or why it could not read one.
 * Build it with {@link ReplyInterpretation.understood} or {@link ReplyInterpretation.notUnderstood}; a
 * plain object does not type-check.
 */
export class ReplyInterpretation<TDecision> {
  readonly #brand = INTERPRETATION;
  /** `understood` or `not-understood`. */
  readonly kind: "understood" | "not-understood";
  /** The decision, when understood. It is validated like any decision. */
  readonly decision: TDecision | undefined;
  /** Why the reply could not be read, when not understood. */
  readonly reason: string | undefined;

  private constructor(
    kind: "understood" | "not-understood",
    decision: TDecision | undefined,
    reason: string | undefined,
  ) {
    this.kind = kind;
    this.decision = decision;
    this.reason = reason;
    void this.#brand;
  }

  /** The reply says `decision`. */
  static understood<TDecision>(decision: TDecision): ReplyInterpretation<TDecision> {
    return new ReplyInterpretation<TDecision>("understood", decision, undefined);
  }

  /** The reply cannot be read; `reason` is what the person is told (the pause keeps waiting). */
  static notUnderstood<TDecision = never>(args: { reason: string }): ReplyInterpretation<TDecision> {
    return new ReplyInterpretation<TDecision>("not-understood", undefined, args.reason);
  }

  /** True for a value built by this class, in any installed copy of core. */
  static is(value: unknown): value is ReplyInterpretation<unknown> {
    if (typeof value !== "object" || value === null) return false;
    const kind = (value as { kind?: unknown }).kind;
    return (
      (kind === "understood" || kind === "not-understood") &&
      value.constructor?.name === "ReplyInterpretation"
    );
  }
}
