import type { DecisionModel, DecisionRequest, DecisionResponse } from "@agboss/core";
import { type AIMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import type { ChatOpenAI } from "@langchain/openai";
import { OpenAiProviderError, OpenAiProviderErrorCode } from "./openai-provider-error.js";

/** One candidate for a generated token, as the chat completions API reports it. */
export interface TokenLogprob {
  readonly token: string;
  /** Natural log of the token's probability. */
  readonly logprob: number;
}

/** How many alternatives a decision call asks for at the answer's one token. */
export const DECISION_TOP_LOGPROBS = 5;

// " Yes", "YES", "yes.", "\nno" all read as their letters.
const lettersOf = (token: string): string => token.toLowerCase().replace(/[^a-z]/g, "");

/**
 * P(yes) from the likeliest tokens at the answer's position: the probability mass of yes-like tokens
 * over that of yes-like and no-like tokens together. Case, spaces and punctuation around the word do
 * not matter; other tokens are ignored. `undefined` when no token reads as yes or no.
 *
 * @example
 * probabilityOfYes([{ token: "Yes", logprob: Math.log(0.6) }, { token: " yes", logprob: Math.log(0.3) }, { token: "No", logprob: Math.log(0.1) }]) // 0.9
 */
export function probabilityOfYes(candidates: readonly TokenLogprob[]): number | undefined {
  let yes = 0;
  let no = 0;
  const seen = new Set<string>();
  for (const { token, logprob } of candidates) {
    // The chosen token may be listed again among the alternatives: count each token once.
    if (seen.has(token) || !Number.isFinite(logprob)) continue;
    seen.add(token);
    const word = lettersOf(token);
    if (word === "yes") yes += Math.exp(logprob);
    else if (word === "no") no += Math.exp(logprob);
  }
  return yes + no === 0 ? undefined : yes / (yes + no);
}

interface CompletionLogprobs {
  readonly content?: ReadonlyArray<TokenLogprob & { readonly top_logprobs?: readonly TokenLogprob[] }> | null;
}

/**
 * A decision model over a chat completions endpoint: it asks for a one-token answer with the
 * likeliest alternatives' log-probabilities and reads P(yes) from them. `model` must be made with
 * `logprobs: true, topLogprobs, maxTokens: 1, temperature: 0`.
 * @internal
 */
export class LogprobDecisionModel implements DecisionModel {
  constructor(
    private readonly modelId: string,
    private readonly model: ChatOpenAI,
  ) {}

  async decide(request: DecisionRequest): Promise<DecisionResponse> {
    const reply = (await this.model.invoke(
      [new SystemMessage(request.instructions), new HumanMessage(request.input)],
      { signal: request.signal },
    )) as AIMessage;
    const logprobs = reply.response_metadata?.logprobs as CompletionLogprobs | undefined | null;
    const first = logprobs?.content?.[0];
    if (first === undefined) {
      throw new OpenAiProviderError(
        OpenAiProviderErrorCode.NoLogprobs,
        `The endpoint answered the decision call to "${this.modelId}" (for ${request.caller}) without token ` +
          "log-probabilities. A decision model needs an endpoint and a model that return logprobs " +
          "(logprobs: true, top_logprobs); take it out of decides to use it as a chat model instead.",
      );
    }
    const candidates = [first, ...(first.top_logprobs ?? [])];
    const probability = probabilityOfYes(candidates);
    if (probability === undefined) {
      const seen = [...new Set(candidates.map((c) => JSON.stringify(c.token)))].join(", ");
      throw new OpenAiProviderError(
        OpenAiProviderErrorCode.NoDecision,
        `"${this.modelId}" answered the yes / no question of ${request.caller} with neither yes nor no ` +
          `among its likeliest tokens (${seen}).`,
      );
    }
    const usage = reply.usage_metadata;
    return {
      probabilityYes: probability,
      ...(usage === undefined
        ? {}
        : { usage: { inputTokens: usage.input_tokens, outputTokens: usage.output_tokens } }),
    };
  }
}
