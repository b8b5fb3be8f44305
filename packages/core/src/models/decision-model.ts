import type { ModelUsage } from "./chat-model.js";

/** A yes / no question about one boolean field of an answer. Build it with {@link Decision.noul}. */
export interface DecisionQuestion {
  /** The boolean field the probability decides, e.g. `approved`. */
  readonly field: string;
}

/** Builders of decision questions. */
export const Decision = {
  /** A question answered by "no" or "yes" about `field`: true when P(yes) > 0.5. */
  noul(field: string): DecisionQuestion {
    return Object.freeze({ field });
  },
} as const;

/** What the runtime asks a decision model. */
export interface DecisionRequest {
  /** The model id the caller named. */
  readonly model: string;
  readonly question: DecisionQuestion;
  /** What the model reads before the input: the framework's question, then the caller's prompt. */
  readonly instructions: string;
  /** The material to decide about (for an interpreter: `### ask` and `### reply`). */
  readonly input: string;
  /** Who asks, e.g. `reply-interpreter:deposit-reply-interpreter`. */
  readonly caller: string;
  readonly signal?: AbortSignal;
}

/** What a decision model answered. */
export interface DecisionResponse {
  /** P(yes), between 0 and 1. */
  readonly probabilityYes: number;
  readonly usage?: ModelUsage;
}

/**
 * A model that answers a yes / no question with a probability (from token log-probabilities), used
 * by reply interpreters of approval roles. A provider offers one through `decisionModel(modelId)`.
 */
export interface DecisionModel {
  decide(request: DecisionRequest): Promise<DecisionResponse>;
}
