import type { ModelUsage } from "@agboss/core";
import { TestSetupError } from "./test-setup-error.js";

const DECISION_TURN = Symbol.for("agboss.testing.decision-turn");

/**
 * A scripted answer of a decision model: P(yes) for the one field it is asked about. Made by
 * {@link decideWith}; played by `ModelScript.decide`.
 */
export interface DecisionTurn {
  readonly [DECISION_TURN]: true;
  /** The boolean field the probability is for, e.g. `approved`. */
  readonly field: string;
  /** P(yes), between 0 and 1. */
  readonly probabilityYes: number;
  /** Tokens the scripted call reports. */
  readonly usage?: ModelUsage;
}

/** True when `turn` was made by {@link decideWith}. @internal */
export function isDecisionTurn(turn: unknown): turn is DecisionTurn {
  return typeof turn === "object" && turn !== null && (turn as Partial<DecisionTurn>)[DECISION_TURN] === true;
}

/**
 * A turn in which a decision model answers its yes / no question with P(yes): `{ approved: 0.9 }`
 * approves (P(yes) > 0.5), `{ approved: 0.2 }` refuses. Name exactly one field, the one the question is
 * about; the probability must lie between 0 and 1.
 *
 * @example
 * mockLlm(DepositReplyInterpreter).thenReturn(decideWith({ approved: 0.9 }));
 * mockLlm(DepositReplyInterpreter).when({ reply: /not yet/ }).thenReturn(decideWith({ approved: 0.2 }));
 */
export function decideWith(
  probabilities: Readonly<Record<string, number>>,
  options: { readonly usage?: ModelUsage } = {},
): DecisionTurn {
  const entries = Object.entries(probabilities);
  const [first] = entries;
  if (entries.length !== 1 || first === undefined) {
    throw new TestSetupError(
      `decideWith(${JSON.stringify(probabilities)}): name exactly one field and its P(yes), e.g. decideWith({ approved: 0.9 }); a decision model answers one yes / no question.`,
    );
  }
  const [field, probabilityYes] = first;
  if (typeof probabilityYes !== "number" || !(probabilityYes >= 0 && probabilityYes <= 1)) {
    throw new TestSetupError(
      `decideWith({ ${field}: ${String(probabilityYes)} }): P(yes) must be a number from 0 to 1, e.g. 0.9 to approve or 0.2 to refuse.`,
    );
  }
  return Object.freeze({
    [DECISION_TURN]: true as const,
    field,
    probabilityYes,
    ...(options.usage === undefined ? {} : { usage: options.usage }),
  });
}
