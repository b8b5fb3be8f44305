import {
  type ChatModel,
  componentOf,
  type DecisionModel,
  fromLangChain,
  ModelProvider,
  type ModelProviderHandler,
  type ModelProviderOptions,
  type OnInit,
} from "@agboss/core";
import { ChatOpenAI, type ChatOpenAIFields } from "@langchain/openai";
import { DECISION_TOP_LOGPROBS, LogprobDecisionModel } from "./logprob-decision-model.js";
import { OpenAiProviderError, OpenAiProviderErrorCode } from "./openai-provider-error.js";

/** The environment variables an OpenAI-compatible provider reads. */
export const OpenAiEnv = {
  /** The endpoint's base URL, e.g. `https://openrouter.ai/api/v1`; default {@link OPENAI_DEFAULT_BASE_URL}. */
  BaseUrl: "AGBOSS_OPENAI_BASE_URL",
  /** The API key. */
  ApiKey: "AGBOSS_OPENAI_API_KEY",
  /** The API key when `AGBOSS_OPENAI_API_KEY` is not set. */
  FallbackApiKey: "OPENAI_API_KEY",
  /** Comma-separated model-id patterns the env-configured provider serves (`moonshotai/*,openai/*`); default `*`. */
  Serves: "AGBOSS_OPENAI_SERVES",
  /** Comma-separated patterns of the served ids that are decision models; default none. */
  Decides: "AGBOSS_OPENAI_DECIDES",
} as const;

/** The OpenAI API, the base URL when none is configured. */
export const OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1";

/**
 * Model-id patterns from a comma-separated list (`"moonshotai/*, openai/*"`); `undefined` for an
 * unset or blank value.
 */
export function modelPatterns(value: string | undefined): string[] | undefined {
  const patterns = (value ?? "")
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "");
  return patterns.length === 0 ? undefined : patterns;
}

/** More fields for every `ChatOpenAI` the provider makes (timeouts, retries, headers…). */
export type ChatOpenAIExtraFields = Omit<ChatOpenAIFields, "model" | "modelName" | "apiKey" | "openAIApiKey">;

/** How an OpenAI-compatible provider connects; what is not given here is read from the environment at startup. */
export interface OpenAiCompatibleSettings {
  /** The endpoint, e.g. `https://openrouter.ai/api/v1`. Default: the `baseURLVariable`, else the OpenAI API. */
  readonly baseURL?: string;
  /** The API key. Default: the first set variable of `apiKeyVariables`. Never write a real key in code. */
  readonly apiKey?: string;
  /** Where the base URL is read from when `baseURL` is not given. Default `AGBOSS_OPENAI_BASE_URL`. */
  readonly baseURLVariable?: string;
  /** Where the key is read from when `apiKey` is not given, first set wins. Default `AGBOSS_OPENAI_API_KEY`, `OPENAI_API_KEY`. */
  readonly apiKeyVariables?: readonly string[];
  /** The variables to read. Default `process.env` at startup. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** More fields for every `ChatOpenAI` made, e.g. `{ timeout: 30_000, maxRetries: 2 }`. */
  readonly chatOpenAI?: ChatOpenAIExtraFields;
}

/** Where a provider's requests go, resolved at startup. */
export interface OpenAiConnection {
  readonly baseURL: string;
  readonly apiKey: string;
}

/**
 * The behaviour of an OpenAI-compatible model provider, undecorated: chat models through
 * `@langchain/openai`'s `ChatOpenAI`, and decision models that read P(yes) from the log-probabilities
 * of a one-token answer. Its connection is resolved in `onInit`, so a missing key fails the
 * application's start, naming the variable to set.
 *
 * Use {@link OpenAiCompatibleModelProvider} (configured by environment), make a class with
 * {@link openAiCompatibleProvider}, or extend it under your own `@ModelProvider`:
 *
 * @example
 * @ModelProvider({ name: "openrouter-model-provider", serves: ["moonshotai/*"], decides: ["typesafe/*"] })
 * export class OpenRouterModelProvider extends OpenAiCompatibleProviderBase {
 *   constructor() {
 *     super({ baseURL: "https://openrouter.ai/api/v1", apiKeyVariables: ["OPENROUTER_API_KEY"] });
 *   }
 * }
 */
export class OpenAiCompatibleProviderBase implements ModelProviderHandler, OnInit {
  readonly #settings: OpenAiCompatibleSettings;
  readonly #decisionModels = new Map<string, DecisionModel>();
  #connection: OpenAiConnection | undefined;

  constructor(settings: OpenAiCompatibleSettings = {}) {
    this.#settings = settings;
  }

  /** Resolves the base URL and the key; throws {@link OpenAiProviderError} when either cannot work. */
  onInit(): void {
    this.#connection = this.#resolveConnection();
  }

  /** Where requests go (the key included), once started. */
  get connection(): OpenAiConnection {
    this.#connection ??= this.#resolveConnection();
    return this.#connection;
  }

  /** A chat model for `modelId` over the endpoint, adapted with `fromLangChain`. */
  chatModel(modelId: string): ChatModel {
    return fromLangChain(new ChatOpenAI(this.#fields(modelId, {})));
  }

  /**
   * A decision model for `modelId`: one chat completion of at most one token at temperature 0, with
   * the likeliest tokens' log-probabilities, from which P(yes) is read.
   */
  decisionModel(modelId: string): DecisionModel {
    let model = this.#decisionModels.get(modelId);
    if (model === undefined) {
      const chat = new ChatOpenAI(
        this.#fields(modelId, {
          logprobs: true,
          topLogprobs: DECISION_TOP_LOGPROBS,
          maxTokens: 1,
          temperature: 0,
          streaming: false,
        }),
      );
      model = new LogprobDecisionModel(modelId, chat);
      this.#decisionModels.set(modelId, model);
    }
    return model;
  }

  #fields(modelId: string, forced: Partial<ChatOpenAIFields>): ChatOpenAIFields {
    const { baseURL, apiKey } = this.connection;
    const extra = this.#settings.chatOpenAI ?? {};
    return {
      ...extra,
      ...forced,
      model: modelId,
      apiKey,
      configuration: { ...extra.configuration, baseURL },
    };
  }

  #resolveConnection(): OpenAiConnection {
    const settings = this.#settings;
    const env = settings.env ?? process.env;
    const provider = this.#providerName();
    const read = (name: string) => {
      const value = env[name]?.trim();
      return value === undefined || value === "" ? undefined : value;
    };
    const urlVariable = settings.baseURLVariable ?? OpenAiEnv.BaseUrl;
    const baseURL = settings.baseURL ?? read(urlVariable) ?? OPENAI_DEFAULT_BASE_URL;
    if (!URL.canParse(baseURL)) {
      throw new OpenAiProviderError(
        OpenAiProviderErrorCode.BadConfiguration,
        `${provider}: the base URL ${JSON.stringify(baseURL)} is no URL. ` +
          (settings.baseURL === undefined
            ? `Set ${urlVariable} to the endpoint, e.g. https://openrouter.ai/api/v1.`
            : "Pass an absolute URL as baseURL, e.g. https://openrouter.ai/api/v1."),
      );
    }
    const keyVariables = settings.apiKeyVariables ?? [OpenAiEnv.ApiKey, OpenAiEnv.FallbackApiKey];
    const apiKey = settings.apiKey ?? keyVariables.map(read).find((v) => v !== undefined);
    if (apiKey === undefined || apiKey === "") {
      const variables =
        keyVariables.length === 0
          ? "pass apiKey in its settings"
          : `set ${keyVariables[0]}${keyVariables.length > 1 ? ` (or ${keyVariables.slice(1).join(", ")})` : ""}`;
      throw new OpenAiProviderError(
        OpenAiProviderErrorCode.MissingApiKey,
        `${provider} has no API key for ${baseURL}: ${variables} in the environment of the process. ` +
          "An endpoint that needs no key still needs a placeholder value.",
      );
    }
    return { baseURL, apiKey };
  }

  #providerName(): string {
    const name = componentOf<{ name?: unknown }>(this.constructor)?.options.name;
    return typeof name === "string" ? `${this.constructor.name} ("${name}")` : this.constructor.name;
  }
}

/** What {@link openAiCompatibleProvider} declares: the provider's `@ModelProvider` options and its settings. */
export interface OpenAiCompatibleProviderOptions
  extends Omit<ModelProviderOptions, "deps">,
    OpenAiCompatibleSettings {}

/** A provider class made by {@link openAiCompatibleProvider}. */
export type OpenAiCompatibleProviderClass = new () => OpenAiCompatibleProviderBase;

function className(name: string): string {
  const words = name.split(/[^A-Za-z0-9]+/).filter((w) => w !== "");
  const joined = words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join("");
  return /^[A-Za-z]/.test(joined) ? joined : `Provider${joined}`;
}

/**
 * A `@ModelProvider` class for one OpenAI-compatible endpoint, configured in code. List it in
 * `@Application({ providers })`. Settings left out are read from the environment at startup.
 *
 * @example
 * export const OpenRouterModelProvider = openAiCompatibleProvider({
 *   name: "openrouter-model-provider",
 *   serves: ["moonshotai/*", "typesafe/*"],
 *   decides: ["typesafe/*"],
 *   baseURL: "https://openrouter.ai/api/v1",
 *   apiKeyVariables: ["OPENROUTER_API_KEY"],
 * });
 */
export function openAiCompatibleProvider(
  options: OpenAiCompatibleProviderOptions,
): OpenAiCompatibleProviderClass {
  const { name, description, serves, decides, ...settings } = options;
  const Configured = class extends OpenAiCompatibleProviderBase {
    constructor() {
      super(settings);
    }
  };
  Object.defineProperty(Configured, "name", { value: className(name) });
  ModelProvider({
    name,
    serves: [...serves],
    ...(description === undefined ? {} : { description }),
    ...(decides === undefined ? {} : { decides: [...decides] }),
  })(Configured);
  return Configured;
}

/**
 * The OpenAI-compatible provider configured by environment: `AGBOSS_OPENAI_BASE_URL` (default the
 * OpenAI API), `AGBOSS_OPENAI_API_KEY` (else `OPENAI_API_KEY`), `AGBOSS_OPENAI_SERVES` (patterns,
 * default `*`) and `AGBOSS_OPENAI_DECIDES` (patterns, default none). The patterns are read when this
 * module is imported, the URL and the key when the application starts.
 *
 * @example
 * // AGBOSS_OPENAI_BASE_URL=https://openrouter.ai/api/v1 AGBOSS_OPENAI_SERVES=moonshotai/* AGBOSS_OPENAI_API_KEY=…
 * @Application({ name: "refund-application", workflows: [RefundWorkflow], providers: [OpenAiCompatibleModelProvider] })
 * export class RefundApplication {}
 */
@ModelProvider({
  name: "openai-compatible-model-provider",
  description: "Models of an OpenAI-compatible endpoint, configured by AGBOSS_OPENAI_* variables",
  serves: modelPatterns(process.env[OpenAiEnv.Serves]) ?? ["*"],
  decides: modelPatterns(process.env[OpenAiEnv.Decides]) ?? [],
})
export class OpenAiCompatibleModelProvider extends OpenAiCompatibleProviderBase {}
