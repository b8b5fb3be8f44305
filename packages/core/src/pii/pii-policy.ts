import type { PiiDetector } from "./pii-detector.js";

const POLICY = Symbol.for("agboss.pii-policy");

/** What a policy does with what its detector finds. */
export const PiiAction = {
  /** The model reads a token (`⟦pii:1⟧`); tokens in its answer are turned back into the values. */
  ReplaceWithToken: "replace-with-token",
  /** The model call is not made: `PiiRefusedError`. */
  BlockWithRefusal: "block-with-refusal",
} as const;

/** One of {@link PiiAction}. */
export type PiiAction = (typeof PiiAction)[keyof typeof PiiAction];

/**
 * A rule for `@Application({ piiPolicies })` and `@Workflow({ piiPolicies })`: a detector and an
 * action. Build it with {@link replaceWithToken} or {@link blockWithRefusal}.
 */
export interface PiiPolicy {
  readonly detector: PiiDetector;
  readonly action: PiiAction;
  readonly [POLICY]: true;
}

function policy(detector: PiiDetector, action: PiiAction): PiiPolicy {
  if (typeof detector !== "object" || detector === null || typeof detector.name !== "string") {
    throw new TypeError(`${action}(detector): pass a detector such as PiiDetector.sensitiveFields().`);
  }
  return Object.freeze({ detector, action, [POLICY]: true as const });
}

/**
 * The model sees a token in place of each value `detector` finds; tokens in its answer (text, tool
 * arguments, answer) are revealed before they are validated, so tools get the real values.
 *
 * @example
 * piiPolicies: [replaceWithToken(PiiDetector.sensitiveFields()), replaceWithToken(PiiDetector.email())]
 */
export function replaceWithToken(detector: PiiDetector): PiiPolicy {
  return policy(detector, PiiAction.ReplaceWithToken);
}

/**
 * A model call whose input holds a value `detector` finds is not made: it throws `PiiRefusedError`.
 *
 * @example
 * piiPolicies: [blockWithRefusal(PiiDetector.cardNumber())]
 */
export function blockWithRefusal(detector: PiiDetector): PiiPolicy {
  return policy(detector, PiiAction.BlockWithRefusal);
}
