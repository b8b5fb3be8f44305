// Type-checked only: the OpenAI provider's types against the application's @langchain/openai.
export { openAiCompatibleProvider } from "@agboss/provider-openai";
