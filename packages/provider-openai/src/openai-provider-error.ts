import { AgbossError } from "@agboss/core";

/** The stable codes of the errors `@agboss/provider-openai` throws. */
export const OpenAiProviderErrorCode = {
  /** No API key was configured: neither in code nor in any of the variables it is read from. */
  MissingApiKey: "openai.missing-api-key",
  /** A configured value cannot be used, e.g. a base URL that is no URL. */
  BadConfiguration: "openai.bad-configuration",
  /** The endpoint answered a decision call without token log-probabilities. */
  NoLogprobs: "openai.no-logprobs",
  /** Neither a yes-like nor a no-like token was among the first token's likeliest tokens. */
  NoDecision: "openai.no-decision",
} as const;

/** One of the codes in {@link OpenAiProviderErrorCode}. */
export type OpenAiProviderErrorCode = (typeof OpenAiProviderErrorCode)[keyof typeof OpenAiProviderErrorCode];

/**
 * A failure of an OpenAI-compatible provider: a configuration that cannot work (thrown at startup,
 * from `onInit`), or a decision call whose answer holds no yes / no probability.
 */
export class OpenAiProviderError extends AgbossError {
  static override readonly kind: string = "OpenAiProviderError";

  constructor(code: OpenAiProviderErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(code, message, options);
  }
}
