const DETECTOR = Symbol.for("agboss.pii-detector");

/** What a PII policy looks for in the text a model reads. Build one with the {@link PiiDetector} helpers. */
export interface PiiDetector {
  /** Names it in errors, e.g. `sensitive-fields`, `email`. */
  readonly name: string;
  /** `fields`: values of DTO fields marked `sensitive(…)`; `pattern`: matches of `pattern`. */
  readonly kind: "fields" | "pattern";
  /** For `pattern`: a global regular expression. */
  readonly pattern: RegExp | undefined;
  readonly [DETECTOR]: true;
}

function detector(name: string, kind: PiiDetector["kind"], pattern: RegExp | undefined): PiiDetector {
  return Object.freeze({ name, kind, pattern, [DETECTOR]: true as const });
}

/** Builders of {@link PiiDetector}s. */
export const PiiDetector = {
  /**
   * Values of DTO fields marked `sensitive(…)`: in a step's input, tool arguments and outputs, an
   * agent's answer, and a pause's question. Strings of 3 or more characters and numbers of 4 or more
   * digits are found wherever they appear in the text.
   */
  sensitiveFields(): PiiDetector {
    return detector("sensitive-fields", "fields", undefined);
  },
  /** E-mail addresses. */
  email(): PiiDetector {
    return detector("email", "pattern", /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g);
  },
  /** Payment card numbers: 13 to 19 digits, optionally grouped by spaces or dashes. */
  cardNumber(): PiiDetector {
    return detector("card-number", "pattern", /\b\d(?:[ -]?\d){12,18}\b/g);
  },
  /**
   * Matches of your own pattern (made global if it is not).
   *
   * @example
   * PiiDetector.pattern("iban", /\b[A-Z]{2}\d{2}[A-Z0-9]{11,30}\b/)
   */
  pattern(name: string, pattern: RegExp): PiiDetector {
    if (typeof name !== "string" || name.trim() === "") {
      throw new TypeError("PiiDetector.pattern(name, pattern): give the detector a name.");
    }
    const flags = pattern.flags.includes("g") ? pattern.flags : `${pattern.flags}g`;
    return detector(name, "pattern", new RegExp(pattern.source, flags));
  },
} as const;
