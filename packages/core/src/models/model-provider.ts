import { ComponentKind } from "../container/component-kind.js";
import { componentDecorator } from "../container/component-registry.js";
import type { ChatModel } from "./chat-model.js";
import type { DecisionModel } from "./decision-model.js";

/** What `@ModelProvider` declares. */
export interface ModelProviderOptions {
  /** Ends with `-model-provider`. */
  readonly name: string;
  readonly description?: string;
  /**
   * The model ids it serves: exact ids, or prefixes ending in `*` (`"moonshotai/*"`, `"*"` for all).
   */
  readonly serves: readonly string[];
  /** The served ids (same patterns) that are decision models: they answer yes / no with a probability. */
  readonly decides?: readonly string[];
  readonly deps?: readonly unknown[];
}

/** What a `@ModelProvider` class implements. */
export interface ModelProviderHandler {
  /** The model for an id this provider serves. Called once per id; the result is reused. */
  chatModel(modelId: string): ChatModel | Promise<ChatModel>;
  /** The decision model for an id listed in `decides`. */
  decisionModel?(modelId: string): DecisionModel | Promise<DecisionModel>;
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

/**
 * True when the provider that serves `modelId` (the first whose `serves` matches) lists it in its
 * `decides`: the id names a decision model, which answers yes / no with a probability.
 */
export function decidesModel(
  providers: readonly { readonly options: ModelProviderOptions }[],
  modelId: string,
): boolean {
  const provider = providers.find((p) => servesModel(p.options.serves, modelId));
  return provider?.options.decides !== undefined && servesModel(provider.options.decides, modelId);
}
