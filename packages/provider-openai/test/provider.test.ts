import { AgbossError, componentOf, Decision, type ModelProviderOptions } from "@agboss/core";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import {
  modelPatterns,
  OpenAiCompatibleProviderBase,
  OpenAiProviderError,
  OpenAiProviderErrorCode,
  openAiCompatibleProvider,
  probabilityOfYes,
} from "../src/index.js";
import {
  type ChatCompletionsServer,
  type CompletionAnswer,
  startChatCompletionsServer,
} from "./chat-completions-server.js";

const p = (token: string, probability: number) => ({ token, logprob: Math.log(probability) });

describe("probabilityOfYes", () => {
  test("sums yes-like against no-like tokens, whatever their case, spaces or punctuation", () => {
    expect(probabilityOfYes([p("Yes", 0.6), p(" yes", 0.2), p("YES.", 0.1), p("No", 0.1)])).toBeCloseTo(0.9);
    expect(probabilityOfYes([p(" no", 0.5), p("\nNo", 0.3), p("yes", 0.2), p("Maybe", 0.4)])).toBeCloseTo(
      0.2,
    );
  });

  test("counts a token listed twice (chosen and among the alternatives) once", () => {
    expect(probabilityOfYes([p("yes", 0.5), p("yes", 0.5), p("no", 0.5)])).toBeCloseTo(0.5);
  });

  test("ignores words that only start like yes or no, and gives undefined when none reads as either", () => {
    expect(probabilityOfYes([p("Yesterday", 0.5), p("Nothing", 0.5)])).toBeUndefined();
    expect(probabilityOfYes([])).toBeUndefined();
    expect(probabilityOfYes([p("yes", 0.01), p("note", 0.99)])).toBe(1);
  });
});

describe("modelPatterns", () => {
  test("splits a comma-separated list and drops blanks", () => {
    expect(modelPatterns(" moonshotai/*, openai/* ,,")).toEqual(["moonshotai/*", "openai/*"]);
    expect(modelPatterns("  ")).toBeUndefined();
    expect(modelPatterns(undefined)).toBeUndefined();
  });
});

describe("configuration", () => {
  test("openAiCompatibleProvider declares a @ModelProvider with its serves and decides", () => {
    const Provider = openAiCompatibleProvider({
      name: "openrouter-model-provider",
      serves: ["moonshotai/*", "typesafe/*"],
      decides: ["typesafe/*"],
      apiKey: "k",
    });
    expect(Provider.name).toBe("OpenrouterModelProvider");
    expect(new Provider()).toBeInstanceOf(OpenAiCompatibleProviderBase);
    expect(componentOf<ModelProviderOptions>(Provider)?.options).toMatchObject({
      name: "openrouter-model-provider",
      serves: ["moonshotai/*", "typesafe/*"],
      decides: ["typesafe/*"],
    });
  });

  test("a missing key fails onInit, naming the variables to set", () => {
    const Provider = openAiCompatibleProvider({ name: "keyless-model-provider", serves: ["*"], env: {} });
    const error = (() => {
      try {
        new Provider().onInit();
      } catch (e) {
        return e;
      }
    })() as OpenAiProviderError;
    expect(error).toBeInstanceOf(OpenAiProviderError);
    expect(error).toBeInstanceOf(AgbossError);
    expect(error.code).toBe(OpenAiProviderErrorCode.MissingApiKey);
    expect(error.message).toContain("set AGBOSS_OPENAI_API_KEY (or OPENAI_API_KEY)");
    expect(error.message).toContain('KeylessModelProvider ("keyless-model-provider")');

    const Own = openAiCompatibleProvider({
      name: "own-model-provider",
      serves: ["*"],
      env: { OPENAI_API_KEY: "ignored" },
      apiKeyVariables: ["OPENROUTER_API_KEY"],
    });
    expect(() => new Own().onInit()).toThrow(/set OPENROUTER_API_KEY in the environment/);
  });

  test("the key and the base URL come from the variables, AGBOSS_OPENAI_API_KEY before OPENAI_API_KEY", () => {
    const Provider = openAiCompatibleProvider({
      name: "env-model-provider",
      serves: ["*"],
      env: { OPENAI_API_KEY: "fallback", AGBOSS_OPENAI_BASE_URL: "http://127.0.0.1:9/v1" },
    });
    const fallback = new Provider();
    fallback.onInit();
    expect(fallback.connection).toEqual({ baseURL: "http://127.0.0.1:9/v1", apiKey: "fallback" });
    const Both = openAiCompatibleProvider({
      name: "both-model-provider",
      serves: ["*"],
      env: { OPENAI_API_KEY: "fallback", AGBOSS_OPENAI_API_KEY: "first" },
    });
    const both = new Both();
    both.onInit();
    expect(both.connection).toEqual({ baseURL: "https://api.openai.com/v1", apiKey: "first" });
  });

  test("a base URL that is no URL fails onInit", () => {
    const Provider = openAiCompatibleProvider({
      name: "bad-url-model-provider",
      serves: ["*"],
      env: { AGBOSS_OPENAI_BASE_URL: "openrouter.ai", AGBOSS_OPENAI_API_KEY: "k" },
    });
    expect(() => new Provider().onInit()).toThrow(/Set AGBOSS_OPENAI_BASE_URL to the endpoint/);
  });

  test("OpenAiCompatibleModelProvider reads serves and decides from the environment when imported", async () => {
    vi.stubEnv("AGBOSS_OPENAI_SERVES", "moonshotai/*, typesafe/*");
    vi.stubEnv("AGBOSS_OPENAI_DECIDES", "typesafe/jev-1.13");
    vi.resetModules();
    try {
      const { OpenAiCompatibleModelProvider } = await import("../src/index.js");
      expect(componentOf<ModelProviderOptions>(OpenAiCompatibleModelProvider)?.options).toMatchObject({
        name: "openai-compatible-model-provider",
        serves: ["moonshotai/*", "typesafe/*"],
        decides: ["typesafe/jev-1.13"],
      });
      vi.stubEnv("AGBOSS_OPENAI_SERVES", "");
      vi.stubEnv("AGBOSS_OPENAI_DECIDES", "");
      vi.resetModules();
      const again = await import("../src/index.js");
      expect(componentOf<ModelProviderOptions>(again.OpenAiCompatibleModelProvider)?.options).toMatchObject({
        serves: ["*"],
        decides: [],
      });
    } finally {
      vi.unstubAllEnvs();
      vi.resetModules();
    }
  });
});

describe("over a chat completions endpoint", () => {
  let server: ChatCompletionsServer;
  let next: CompletionAnswer[] = [];
  beforeAll(async () => {
    server = await startChatCompletionsServer(() => next.shift() ?? { content: "(unscripted)" });
  });
  afterAll(() => server.close());

  const provider = () => {
    const Provider = openAiCompatibleProvider({
      name: "loopback-model-provider",
      serves: ["*"],
      decides: ["typesafe/*"],
      baseURL: server.baseURL,
      apiKey: "sk-loopback",
      chatOpenAI: { maxRetries: 0 },
    });
    const instance = new Provider();
    instance.onInit();
    return instance;
  };

  test("chatModel sends the model id, messages and tools with the key, and reads tool calls and usage", async () => {
    next = [
      {
        toolCalls: [{ name: "refund-card-tool", arguments: { orderId: "o1" } }],
        usage: { input: 42, output: 7 },
      },
    ];
    const model = provider().chatModel("moonshotai/kimi-k2.6");
    const response = await model.invoke({
      model: "moonshotai/kimi-k2.6",
      caller: "agent:refund-agent",
      messages: [
        { role: "system", content: "Refund what is asked." },
        { role: "user", content: "refund o1" },
      ],
      tools: [
        {
          name: "refund-card-tool",
          description: "Refunds a card",
          parameters: { type: "object", properties: { orderId: { type: "string" } }, required: ["orderId"] },
        },
      ],
      toolChoice: "required",
    });
    expect(response.toolCalls).toEqual([
      { id: expect.any(String), name: "refund-card-tool", arguments: { orderId: "o1" } },
    ]);
    expect(response.usage).toEqual({ inputTokens: 42, outputTokens: 7 });
    const request = server.requests.at(-1);
    expect(request?.path).toBe("/v1/chat/completions");
    expect(request?.headers.authorization).toBe("Bearer sk-loopback");
    expect(request?.body).toMatchObject({
      model: "moonshotai/kimi-k2.6",
      tool_choice: "required",
      messages: [
        { role: "system", content: "Refund what is asked." },
        { role: "user", content: "refund o1" },
      ],
      tools: [{ type: "function", function: { name: "refund-card-tool", description: "Refunds a card" } }],
    });
    expect(request?.body.logprobs).toBeUndefined();
  });

  test("decisionModel asks for one token with the top 5 log-probabilities at temperature 0 and reads P(yes)", async () => {
    next = [
      {
        content: "Yes",
        firstToken: [
          ["Yes", 0.6],
          [" yes", 0.3],
          ["No", 0.1],
          ["Maybe", 0.05],
        ],
        usage: { input: 80, output: 1 },
      },
    ];
    const instance = provider();
    const model = instance.decisionModel("typesafe/jev-1.13");
    expect(instance.decisionModel("typesafe/jev-1.13")).toBe(model);
    const decided = await model.decide({
      model: "typesafe/jev-1.13",
      question: Decision.noul("approved"),
      instructions: "Does the reply approve? Answer yes or no.",
      input: "### ask\n{}\n\n### reply\nsure",
      caller: "reply-interpreter:deposit-reply-interpreter",
    });
    expect(decided.probabilityYes).toBeCloseTo(0.9);
    expect(decided.usage).toEqual({ inputTokens: 80, outputTokens: 1 });
    expect(server.requests.at(-1)?.body).toMatchObject({
      model: "typesafe/jev-1.13",
      logprobs: true,
      top_logprobs: 5,
      max_tokens: 1,
      temperature: 0,
      messages: [
        { role: "system", content: "Does the reply approve? Answer yes or no." },
        { role: "user", content: "### ask\n{}\n\n### reply\nsure" },
      ],
    });
    expect(server.requests.at(-1)?.body.tools).toBeUndefined();
  });

  test("an answer without log-probabilities, or with neither yes nor no, is a clear error", async () => {
    const model = provider().decisionModel("typesafe/jev-1.13");
    const request = {
      model: "typesafe/jev-1.13",
      question: Decision.noul("approved"),
      instructions: "?",
      input: "!",
      caller: "reply-interpreter:deposit-reply-interpreter",
    };
    next = [{ content: "Yes" }];
    await expect(model.decide(request)).rejects.toMatchObject({
      code: OpenAiProviderErrorCode.NoLogprobs,
      message: expect.stringContaining("without token log-probabilities"),
    });
    next = [
      {
        content: "Perhaps",
        firstToken: [
          ["Perhaps", 0.7],
          ["Maybe", 0.3],
        ],
      },
    ];
    await expect(model.decide(request)).rejects.toMatchObject({
      code: OpenAiProviderErrorCode.NoDecision,
      message: expect.stringContaining('("Perhaps", "Maybe")'),
    });
  });
});
