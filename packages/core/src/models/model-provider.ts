import { ComponentKind } from "../components/component-kind.js";
import { componentDecorator } from "../components/component-registry.js";
import type { ChatModel } from "./chat-model.js";

/** What `@ModelProvider` declares. */
export interface ModelProviderOptions {
  /** Ends with `-model-provider`. */
  readonly name: string;
  readonly description?: string;
  /**
   * The model ids it serves: exact ids, or prefixes ending in `*` (`"moonshotai/*"`, `"*"` for all).
   */
  readonly serves: readonly string[];
  readonly deps?: readonly unknown[];
}

/** What a `@ModelProvider` class implements. */
export interface ModelProviderHandler {
  /** The model for an id this provider serves. Called once per id; the result is reused. */
  chatModel(modelId: string): ChatModel | Promise<ChatModel>;
}

/**
 * Declares where models come from.
 *
 * @example
 * @ModelProvider({ name: "openrouter-model-provider", serves: ["moonshotai/*"] })
 * export class OpenRouterModelProvider implements ModelProviderHandler {
 *   chatModel(id: string) { return fromLangChain(new ChatOpenAI({ model: id, configuration: { baseURL } })); }
 * }
 */
export function ModelProvider(options: ModelProviderOptions) {
  return componentDecorator(ComponentKind.ModelProvider, options);
}

/** True when one of `serves` matches `modelId`. */
export function servesModel(serves: readonly string[], modelId: string): boolean {
  return serves.some((pattern) =>
    pattern.endsWith("*") ? modelId.startsWith(pattern.slice(0, -1)) : pattern === modelId,
  );
}
