import type { AnyClass } from "../container/component-registry.js";
import type { Container } from "../container/container.js";
import { ModelUnservedError } from "../errors/runtime-errors.js";
import type { ChatModel } from "./chat-model.js";
import type { DecisionModel } from "./decision-model.js";
import {
  decidesModel,
  type ModelProviderHandler,
  type ModelProviderOptions,
  servesModel,
} from "./model-provider.js";

/**
 * Resolves the model a component calls: an override set for that component (the testing kit's
 * `mockLlm`), else the provider whose `serves` matches the model id.
 * @internal
 */
export class ModelRegistry {
  readonly #overrides = new Map<AnyClass, ChatModel>();
  readonly #cache = new Map<string, Promise<ChatModel>>();
  #fallback: ((component: AnyClass, caller: string) => ChatModel) | undefined;

  constructor(
    private readonly container: Container,
    private readonly providers: readonly { readonly cls: AnyClass; readonly options: ModelProviderOptions }[],
  ) {}

  /** Makes `component` call `model`, whatever its model id. */
  override(component: AnyClass, model: ChatModel): void {
    this.#overrides.set(component, model);
  }

  /** The model of any component without an override, instead of the providers. */
  setFallback(fallback: (component: AnyClass, caller: string) => ChatModel): void {
    this.#fallback = fallback;
  }

  /** True when a provider lists `modelId` among its decision models (`decides`). */
  isDecisionModel(modelId: string): boolean {
    return decidesModel(this.providers, modelId);
  }

  /** The decision model for `component`: an override that can decide, else the provider's. */
  async resolveDecision(modelId: string, component: AnyClass, caller: string): Promise<DecisionModel> {
    const override = this.#overrides.get(component) ?? this.#fallback?.(component, caller);
    if (override !== undefined) {
      if (typeof (override as Partial<DecisionModel>).decide === "function")
        return override as unknown as DecisionModel;
      throw new ModelUnservedError(
        modelId,
        `${caller} (its script cannot answer yes / no: script it with decideWith(…))`,
      );
    }
    const provider = this.providers.find((p) => servesModel(p.options.serves, modelId));
    if (provider === undefined) throw new ModelUnservedError(modelId, caller);
    const handler = this.container.get(provider.cls as AnyClass<ModelProviderHandler>);
    if (typeof handler.decisionModel !== "function") {
      throw new ModelUnservedError(
        modelId,
        `${caller} (${provider.options.name} lists it in decides but has no decisionModel(modelId))`,
      );
    }
    return handler.decisionModel(modelId);
  }

  /** The model for `component`, which names `modelId`. */
  async resolve(modelId: string, component: AnyClass, caller: string): Promise<ChatModel> {
    const override = this.#overrides.get(component);
    if (override !== undefined) return override;
    if (this.#fallback !== undefined) return this.#fallback(component, caller);
    let model = this.#cache.get(modelId);
    if (model === undefined) {
      const provider = this.providers.find((p) => servesModel(p.options.serves, modelId));
      if (provider === undefined) throw new ModelUnservedError(modelId, caller);
      const handler = this.container.get(provider.cls as AnyClass<ModelProviderHandler>);
      model = Promise.resolve(handler.chatModel(modelId));
      this.#cache.set(modelId, model);
    }
    return model;
  }
}
