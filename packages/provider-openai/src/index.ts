export {
  DECISION_TOP_LOGPROBS,
  probabilityOfYes,
  type TokenLogprob,
} from "./logprob-decision-model.js";
export {
  type ChatOpenAIExtraFields,
  modelPatterns,
  OPENAI_DEFAULT_BASE_URL,
  OpenAiCompatibleModelProvider,
  OpenAiCompatibleProviderBase,
  type OpenAiCompatibleProviderClass,
  type OpenAiCompatibleProviderOptions,
  type OpenAiCompatibleSettings,
  type OpenAiConnection,
  OpenAiEnv,
  openAiCompatibleProvider,
} from "./openai-compatible-model-provider.js";
export { OpenAiProviderError, OpenAiProviderErrorCode } from "./openai-provider-error.js";
