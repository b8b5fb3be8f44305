import { once } from "node:events";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  Agent,
  type AnyClass,
  type App,
  Application,
  Channel,
  type ChannelAsk,
  ChannelOf,
  ChannelOutcome,
  ChannelRole,
  createApp,
  DecidedBy,
  Dto,
  ExecutionStatus,
  Injectable,
  memoryStore,
  PauseAnswerer,
  ReplyInterpreter,
  start,
  Tool,
  type ToolHandler,
  UninterpretableReplyError,
  Workflow,
  WorkflowFinish,
  WorkflowFinishTextDto,
  WorkflowStart,
  WorkflowStartTextDto,
} from "@agboss/core";
import {
  OpenAiCompatibleModelProvider,
  OpenAiProviderError,
  OpenAiProviderErrorCode,
  openAiCompatibleProvider,
} from "@agboss/provider-openai";
import { afterAll, beforeAll, beforeEach, describe, expect, test, vi } from "vitest";
import { z } from "zod";

// ---------------------------------------------------------------------------------------------------
// A chat completions endpoint on 127.0.0.1: it records every request and answers like a model would.
// ---------------------------------------------------------------------------------------------------

interface Received {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: a JSON body, read loosely by assertions
  readonly body: any;
}

interface WireMessage {
  readonly role: string;
  readonly content: string | null;
  readonly tool_call_id?: string;
  readonly tool_calls?: { id: string; function: { name: string; arguments: string } }[];
}

const AGENT_MODEL = "moonshotai/kimi-k2.6";
const DECISION_MODEL = "typesafe/jev-1.13";
const API_KEY = "sk-loopback-test";

/** P(yes) the endpoint's token log-probabilities give, by the reply the decision model reads. */
const FIRST_TOKENS: Record<string, [string, number][]> = {
  "fine, return it": [
    ["Yes", 0.6],
    [" yes", 0.2],
    ["YES", 0.1],
    ["No", 0.1],
  ],
  "the flat is damaged": [
    ["No", 0.7],
    [" no", 0.1],
    ["Yes", 0.15],
    ["yes", 0.05],
  ],
};

let callIds = 0;

/** What the endpoint answers a chat completions request with: a message, and maybe logprobs. */
function answer(body: {
  messages: WireMessage[];
  tools?: { function: { name: string } }[];
  logprobs?: boolean;
}) {
  const messages = body.messages;
  const last = messages.at(-1) as WireMessage;
  const user = messages.find((m) => m.role === "user")?.content ?? "";
  const toolCall = (name: string, args: unknown) => ({
    content: null,
    tool_calls: [
      { id: `call_${++callIds}`, type: "function", function: { name, arguments: JSON.stringify(args) } },
    ],
  });
  const sections = (text: string) => {
    const [ask, reply] = text.replace(/^### ask\n/, "").split("\n\n### reply\n");
    return { ask: JSON.parse(ask ?? "{}") as { arguments: Record<string, unknown> }, reply: reply ?? "" };
  };
  if (body.logprobs === true) {
    // A decision call: one token, and the likeliest ones with their log-probabilities.
    const candidates = FIRST_TOKENS[sections(user).reply];
    if (candidates === undefined) return { message: { content: "Yes" }, logprobs: null };
    const [chosen] = candidates;
    return {
      message: { content: chosen?.[0] ?? "" },
      logprobs: {
        content: [
          {
            token: chosen?.[0],
            logprob: Math.log(chosen?.[1] ?? 1),
            bytes: null,
            top_logprobs: candidates.map(([token, p]) => ({ token, logprob: Math.log(p), bytes: null })),
          },
        ],
      },
    };
  }
  const tools = (body.tools ?? []).map((t) => t.function.name);
  if (tools.length === 1 && tools[0] === "submit_answer") {
    // A model interpreter: "only half" approves half the amount.
    const { ask, reply } = sections(user);
    if (/half/.test(reply)) {
      const amount = Number(ask.arguments.amountCents);
      return {
        message: toolCall("submit_answer", {
          approved: true,
          overrideArguments: { ...ask.arguments, amountCents: Math.floor(amount / 2) },
        }),
      };
    }
    return { message: toolCall("submit_answer", { approved: false, reason: `unclear: ${reply}` }) };
  }
  if (last.role === "tool") return { message: { content: `Done: ${last.content}` } };
  const words = user.split(" ");
  if (words[0] === "lookup") return { message: toolCall("lookup-order-tool", { orderId: words[1] }) };
  if (words[0] === "refund")
    return { message: toolCall("refund-card-tool", { orderId: words[1], amountCents: Number(words[2]) }) };
  if (words[0] === "return")
    return { message: toolCall("return-deposit-tool", { depositId: words[1], amountCents: 5000 }) };
  return { message: { content: "I cannot help with that." } };
}

let server: Server;
let baseURL = "";
const received: Received[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
      received.push({ path: req.url ?? "", headers: req.headers, body });
      const { message, logprobs } = answer(body);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id: `chatcmpl-${++callIds}`,
          object: "chat.completion",
          created: 1_700_000_000,
          model: body.model,
          choices: [
            {
              index: 0,
              message: { role: "assistant", ...message },
              logprobs: logprobs ?? null,
              finish_reason: "tool_calls" in message ? "tool_calls" : "stop",
            },
          ],
          usage: { prompt_tokens: 120, completion_tokens: 3, total_tokens: 123 },
        }),
      );
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  received.length = 0;
});

// ---------------------------------------------------------------------------------------------------
// The application: an agent with a plain tool, a tool approved in words read by a chat model, and a tool
// approved in words read by a decision model.
// ---------------------------------------------------------------------------------------------------

class OrderRefDto extends Dto({ orderId: z.string().min(1) }) {}
class OrderDto extends Dto({ orderId: z.string(), status: z.string() }) {}
class RefundDto extends Dto({ orderId: z.string().min(1), amountCents: z.number().int().positive() }) {}
class DepositDto extends Dto({ depositId: z.string().min(1), amountCents: z.number().int().positive() }) {}
class DoneDto extends Dto({ status: z.string() }) {}

@Injectable()
class Shop {
  readonly refunds: RefundDto[] = [];
  readonly deposits: DepositDto[] = [];
  readonly asked: string[] = [];
}

@ReplyInterpreter({
  name: "refund-reply-interpreter",
  description: "Reads a manager's reply to a refund",
  decidedBy: DecidedBy.Model,
  model: AGENT_MODEL,
  prompt:
    "The manager answered a refund approval in free text. Decide approve / reject and any changed amount.",
})
class RefundReplyInterpreter {}

@ReplyInterpreter({
  name: "deposit-reply-interpreter",
  description: "Reads whether a clerk's reply approves a deposit return",
  decidedBy: DecidedBy.Model,
  model: DECISION_MODEL,
  prompt: "The clerk answered a deposit return.",
})
class DepositReplyInterpreter {}

@ChannelRole({
  name: "refund-approval-channel",
  description: "A manager approves refunds in words",
  approves: RefundDto,
  answeredBy: PauseAnswerer.Channel,
  replyInterpreter: RefundReplyInterpreter,
})
abstract class RefundApprovalChannel extends ChannelOf<RefundApprovalChannel> {}

@ChannelRole({
  name: "deposit-approval-channel",
  description: "A clerk approves deposit returns in words",
  approves: DepositDto,
  answeredBy: PauseAnswerer.Channel,
  replyInterpreter: DepositReplyInterpreter,
})
abstract class DepositApprovalChannel extends ChannelOf<DepositApprovalChannel> {}

@Channel({ name: "mail-refund-approval-channel", description: "Mails the manager", deps: [Shop] })
class MailRefundApprovalChannel extends RefundApprovalChannel {
  constructor(private readonly shop: Shop) {
    super();
  }
  send(ask: ChannelAsk<RefundApprovalChannel>): Promise<ChannelOutcome<RefundApprovalChannel>> {
    this.shop.asked.push(ask.pauseId);
    return Promise.resolve(ChannelOutcome.awaitReply());
  }
}

@Channel({ name: "mail-deposit-approval-channel", description: "Mails the clerk", deps: [Shop] })
class MailDepositApprovalChannel extends DepositApprovalChannel {
  constructor(private readonly shop: Shop) {
    super();
  }
  send(ask: ChannelAsk<DepositApprovalChannel>): Promise<ChannelOutcome<DepositApprovalChannel>> {
    this.shop.asked.push(ask.pauseId);
    return Promise.resolve(ChannelOutcome.awaitReply());
  }
}

@Tool({ name: "lookup-order-tool", description: "Looks an order up", input: OrderRefDto, output: OrderDto })
class LookupOrderTool implements ToolHandler<OrderRefDto, OrderDto> {
  run(input: OrderRefDto): Promise<OrderDto> {
    return Promise.resolve({ orderId: input.orderId, status: "shipped" });
  }
}

@Tool({
  name: "refund-card-tool",
  description: "Refunds a card payment",
  input: RefundDto,
  output: DoneDto,
  channel: RefundApprovalChannel,
  deps: [Shop],
})
class RefundCardTool implements ToolHandler<RefundDto, DoneDto> {
  constructor(private readonly shop: Shop) {}
  run(input: RefundDto): Promise<DoneDto> {
    this.shop.refunds.push(input);
    return Promise.resolve({ status: `refunded ${input.orderId} (${input.amountCents})` });
  }
}

@Tool({
  name: "return-deposit-tool",
  description: "Returns a deposit",
  input: DepositDto,
  output: DoneDto,
  channel: DepositApprovalChannel,
  deps: [Shop],
})
class ReturnDepositTool implements ToolHandler<DepositDto, DoneDto> {
  constructor(private readonly shop: Shop) {}
  run(input: DepositDto): Promise<DoneDto> {
    this.shop.deposits.push(input);
    return Promise.resolve({ status: `returned ${input.depositId}` });
  }
}

@Agent({
  name: "shop-agent",
  description: "Looks orders up, refunds and returns deposits",
  prompt: "Help the customer with their order.",
  model: AGENT_MODEL,
  tools: [LookupOrderTool, RefundCardTool, ReturnDepositTool],
})
class ShopAgent {}

@WorkflowStart({ name: "shop-workflow-start", description: "A request", input: WorkflowStartTextDto })
class ShopWorkflowStart {}

@WorkflowFinish({ name: "shop-workflow-finish", description: "The answer", output: WorkflowFinishTextDto })
class ShopWorkflowFinish {}

@Workflow({
  name: "shop-workflow",
  version: "1.0.0",
  flow: [start(ShopWorkflowStart).toAgent(ShopAgent).toFinish(ShopWorkflowFinish)],
})
class ShopWorkflow {}

/** The model provider comes with createApp: its base URL is known only once the server listens. */
@Application({
  name: "shop-application",
  workflows: [ShopWorkflow],
  providers: [Shop, MailRefundApprovalChannel, MailDepositApprovalChannel],
})
class ShopApplication {}

const tenant = { tenantId: "acme" } as const;
const manager = { tenantId: "acme", answeredBy: "manager-17" } as const;

function loopbackProvider(): AnyClass {
  return openAiCompatibleProvider({
    name: "loopback-model-provider",
    serves: ["moonshotai/*", "typesafe/*"],
    decides: ["typesafe/*"],
    baseURL,
    env: { AGBOSS_OPENAI_API_KEY: API_KEY },
    chatOpenAI: { maxRetries: 0 },
  });
}

async function withApp(provider: AnyClass, body: (app: App) => Promise<void>): Promise<void> {
  const app = await createApp(ShopApplication, { env: "test", store: memoryStore(), providers: [provider] });
  try {
    await body(app);
  } finally {
    await app.close();
  }
}

/** Runs `text` on a fresh thread; returns the pause the approval channel was sent, if any. */
async function ask(app: App, text: string, threadId: string) {
  const result = await app.execute(ShopWorkflowStart, { text }, { threadId, ownerId: "alice", tenant });
  return { result, pauseId: app.get(Shop).asked.at(-1) as string };
}

describe("@agboss/provider-openai against a chat completions endpoint on loopback", () => {
  test("an agent calls a tool through the provider, reads its result, then answers", async () => {
    await withApp(loopbackProvider(), async (app) => {
      const { result } = await ask(app, "lookup o1", "t-lookup");
      expect(result).toMatchObject({
        status: ExecutionStatus.Completed,
        output: { text: 'Done: {"orderId":"o1","status":"shipped"}' },
      });
    });
    expect(received).toHaveLength(2);
    const [first, second] = received;
    expect(first?.path).toBe("/v1/chat/completions");
    expect(first?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(first?.body.model).toBe(AGENT_MODEL);
    expect(first?.body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual([
      "lookup-order-tool",
      "refund-card-tool",
      "return-deposit-tool",
    ]);
    expect(first?.body.tools[0].function.parameters).toMatchObject({
      type: "object",
      properties: { orderId: { type: "string" } },
    });
    expect(first?.body.tool_choice).toBeUndefined();
    expect(first?.body.logprobs).toBeUndefined();
    expect(first?.body.messages.at(0)).toMatchObject({ role: "system" });
    expect(first?.body.messages.at(0).content).toContain("Help the customer with their order.");
    expect(first?.body.messages.at(-1)).toEqual({ role: "user", content: "lookup o1" });
    const messages = second?.body.messages as WireMessage[];
    const call = messages.find((m) => m.role === "assistant")?.tool_calls?.[0];
    expect(call?.function).toEqual({ name: "lookup-order-tool", arguments: '{"orderId":"o1"}' });
    expect(messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: call?.id });
  });

  test("a model reply interpreter answers through the answer tool: ### ask / ### reply in, the decision out", async () => {
    await withApp(loopbackProvider(), async (app) => {
      const { pauseId, result } = await ask(app, "refund o2 3000", "t-refund");
      expect(result.status).toBe(ExecutionStatus.Paused);
      received.length = 0;
      const done = await app.resume({ pauseId, reply: "ok, but only half" }, manager);
      expect(done).toMatchObject({
        status: ExecutionStatus.Completed,
        output: { text: 'Done: {"status":"refunded o2 (1500)"}' },
      });
      expect(app.get(Shop).refunds).toEqual([{ orderId: "o2", amountCents: 1500 }]);
    });
    const interpreter = received[0];
    expect(interpreter?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(interpreter?.body.model).toBe(AGENT_MODEL);
    expect(interpreter?.body.tool_choice).toBe("required");
    expect(interpreter?.body.tools).toHaveLength(1);
    expect(interpreter?.body.tools[0].function).toMatchObject({
      name: "submit_answer",
      parameters: { type: "object", properties: { approved: { type: "boolean" } }, required: ["approved"] },
    });
    const [system, user] = (interpreter?.body.messages ?? []) as WireMessage[];
    expect(system).toEqual({
      role: "system",
      content:
        "The manager answered a refund approval in free text. Decide approve / reject and any changed amount.",
    });
    expect(user?.role).toBe("user");
    expect(user?.content?.startsWith("### ask\n")).toBe(true);
    expect(user?.content).toContain('"amountCents": 3000');
    expect(user?.content?.endsWith("\n\n### reply\nok, but only half")).toBe(true);
    // Then the agent went on with the tool's result.
    expect(received[1]?.body.messages.at(-1)).toMatchObject({
      role: "tool",
      content: expect.stringContaining("1500"),
    });
  });

  test("a decision-model interpreter approves at P(yes) = 0.9 and refuses at 0.2, read from the endpoint's logprobs", async () => {
    await withApp(loopbackProvider(), async (app) => {
      const yes = await ask(app, "return dep-1", "t-dep-1");
      received.length = 0;
      expect((await app.resume({ pauseId: yes.pauseId, reply: "fine, return it" }, manager)).status).toBe(
        ExecutionStatus.Completed,
      );
      const decision = received[0];
      expect(decision?.headers.authorization).toBe(`Bearer ${API_KEY}`);
      expect(decision?.body).toMatchObject({
        model: DECISION_MODEL,
        logprobs: true,
        top_logprobs: 5,
        max_tokens: 1,
        temperature: 0,
      });
      expect(decision?.body.tools).toBeUndefined();
      expect(decision?.body.tool_choice).toBeUndefined();
      const [system, user] = (decision?.body.messages ?? []) as WireMessage[];
      expect(system?.role).toBe("system");
      expect(system?.content?.startsWith("A person answered the question below in their own words.")).toBe(
        true,
      );
      expect(system?.content?.endsWith("\n\nThe clerk answered a deposit return.")).toBe(true);
      expect(user?.content?.startsWith("### ask\n")).toBe(true);
      expect(user?.content).toContain('"depositId": "dep-1"');
      expect(user?.content?.endsWith("\n\n### reply\nfine, return it")).toBe(true);

      const no = await ask(app, "return dep-2", "t-dep-2");
      received.length = 0;
      const refused = await app.resume({ pauseId: no.pauseId, reply: "the flat is damaged" }, manager);
      expect(refused).toMatchObject({
        status: ExecutionStatus.Completed,
        output: { text: "Done: Tool error: the call was rejected by manager-17" },
      });
      expect(app.get(Shop).deposits).toEqual([{ depositId: "dep-1", amountCents: 5000 }]);
    });
  });

  test("an endpoint that gives no logprobs leaves the pause waiting with a clear reason", async () => {
    await withApp(loopbackProvider(), async (app) => {
      const { pauseId } = await ask(app, "return dep-3", "t-dep-3");
      const error = (await app
        .resume({ pauseId, reply: "whatever" }, manager)
        .catch((e: unknown) => e)) as UninterpretableReplyError;
      expect(error).toBeInstanceOf(UninterpretableReplyError);
      expect(error.cause).toBeInstanceOf(OpenAiProviderError);
      expect(error.reason).toContain("without token log-probabilities");
      expect(app.get(Shop).deposits).toEqual([]);
      expect((await app.resume({ pauseId, reply: "fine, return it" }, manager)).status).toBe(
        ExecutionStatus.Completed,
      );
    });
  });

  test("a missing key fails the application's start, naming the variable to set, before any call", async () => {
    const keyless = openAiCompatibleProvider({
      name: "keyless-model-provider",
      serves: ["moonshotai/*", "typesafe/*"],
      decides: ["typesafe/*"],
      baseURL,
      env: {},
    });
    const failed = await createApp(ShopApplication, {
      env: "test",
      store: memoryStore(),
      providers: [keyless],
    }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(OpenAiProviderError);
    expect(failed).toMatchObject({
      code: OpenAiProviderErrorCode.MissingApiKey,
      message: expect.stringContaining("set AGBOSS_OPENAI_API_KEY (or OPENAI_API_KEY)"),
    });
    expect(received).toEqual([]);
  });

  test.skipIf(process.env.AGBOSS_OPENAI_SERVES !== undefined)(
    "OpenAiCompatibleModelProvider takes its endpoint from AGBOSS_OPENAI_BASE_URL and its key from OPENAI_API_KEY",
    async () => {
      vi.stubEnv("AGBOSS_OPENAI_BASE_URL", baseURL);
      vi.stubEnv("AGBOSS_OPENAI_API_KEY", "");
      vi.stubEnv("OPENAI_API_KEY", "sk-from-fallback");
      try {
        await withApp(OpenAiCompatibleModelProvider, async (app) => {
          const { result } = await ask(app, "lookup o9", "t-env");
          expect(result.status).toBe(ExecutionStatus.Completed);
        });
      } finally {
        vi.unstubAllEnvs();
      }
      expect(received.map((r) => [r.path, r.headers.authorization, r.body.model])).toEqual([
        ["/v1/chat/completions", "Bearer sk-from-fallback", AGENT_MODEL],
        ["/v1/chat/completions", "Bearer sk-from-fallback", AGENT_MODEL],
      ]);
    },
  );
});
