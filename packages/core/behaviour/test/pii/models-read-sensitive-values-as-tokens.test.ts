import {
  Agent,
  type AnyClass,
  type App,
  Application,
  blockWithRefusal,
  Channel,
  ChannelOf,
  ChannelOutcome,
  ChannelRole,
  type ChatRequest,
  callTool,
  DecidedBy,
  Dto,
  ExecutionStatus,
  Injectable,
  PauseAnswerer,
  PauseStatus,
  PiiDetector,
  PiiRefusedError,
  PiiUnknownTokenError,
  ReplyInterpreter,
  replaceWithToken,
  replyWith,
  sensitive,
  start,
  Tool,
  ToolCallApprovalDecisionDto,
  type ToolHandler,
  UninterpretableReplyError,
  Workflow,
  WorkflowFinish,
  WorkflowFinishTextDto,
  WorkflowStart,
  WorkflowStartTextDto,
} from "@agboss/core";
import type { ModelScript } from "@agboss/testing";
import { expect } from "vitest";
import { z } from "zod";
import { frozen, onEachBackend } from "../../src/backends.js";
import { RefundRequestDto } from "../../src/fixtures/approval-app.js";
import { ScriptedModelProvider } from "../../src/fixtures/refund-app.js";
import { acme } from "../../src/office.js";

const CARD = "4111 1111 1111 1111";
const TOKEN = /⟦pii:\d+⟧/;

class CardLookupDto extends Dto({ cardNumber: sensitive(z.string()) }) {}
class CardHolderDto extends Dto({ holder: z.string() }) {}
class RefundedDto extends Dto({ status: z.string() }) {}

/** What the tools got, for assertions. */
@Injectable()
class Vault {
  readonly lookups: string[] = [];
  readonly refunds: RefundRequestDto[] = [];
}

@ReplyInterpreter({
  name: "card-reply-interpreter",
  description: "Reads a manager's words about a card refund",
  decidedBy: DecidedBy.Model,
  model: "scripted/card-interpreter",
  prompt: "Decide whether the manager approves the card refund, and any changed amount.",
})
class CardReplyInterpreter {}

@ChannelRole({
  name: "card-approval-channel",
  description: "A manager approves card refunds in words",
  approves: RefundRequestDto,
  answeredBy: PauseAnswerer.Channel,
  replyInterpreter: CardReplyInterpreter,
})
abstract class CardApprovalChannel extends ChannelOf<CardApprovalChannel> {}

@Channel({ name: "mail-card-approval-channel", description: "Mails the manager", deps: [Vault] })
class MailCardApprovalChannel extends CardApprovalChannel {
  send(): Promise<ChannelOutcome<CardApprovalChannel>> {
    return Promise.resolve(ChannelOutcome.awaitReply());
  }
}

@Tool({
  name: "card-refund-tool",
  description: "Refunds a card",
  input: RefundRequestDto,
  output: RefundedDto,
  channel: CardApprovalChannel,
  deps: [Vault],
})
class CardRefundTool implements ToolHandler<RefundRequestDto, RefundedDto> {
  constructor(private readonly vault: Vault) {}
  run(input: RefundRequestDto): Promise<RefundedDto> {
    this.vault.refunds.push(input);
    return Promise.resolve({ status: `refunded ${input.amountCents}` });
  }
}

@Tool({
  name: "card-lookup-tool",
  description: "Finds a card's holder",
  input: CardLookupDto,
  output: CardHolderDto,
  deps: [Vault],
})
class CardLookupTool implements ToolHandler<CardLookupDto, CardHolderDto> {
  constructor(private readonly vault: Vault) {}
  run(input: CardLookupDto): Promise<CardHolderDto> {
    this.vault.lookups.push(input.cardNumber);
    return Promise.resolve({ holder: "Jo Doe" });
  }
}

@Agent({
  name: "card-agent",
  description: "Looks cards up and refunds them",
  prompt: "Help with card refunds.",
  model: "scripted/card-agent",
  tools: [CardLookupTool, CardRefundTool],
})
class CardAgent {}

@WorkflowStart({ name: "card-workflow-start", description: "A request", input: WorkflowStartTextDto })
class CardWorkflowStart {}

@WorkflowFinish({ name: "card-workflow-finish", description: "The answer", output: WorkflowFinishTextDto })
class CardWorkflowFinish {}

@Workflow({
  name: "card-workflow",
  version: "1.0.0",
  flow: [start(CardWorkflowStart).toAgent(CardAgent).toFinish(CardWorkflowFinish)],
  piiPolicies: [
    replaceWithToken(PiiDetector.cardNumber()),
    blockWithRefusal(PiiDetector.pattern("internal-secret", /TOPSECRET-\d+/)),
  ],
})
class CardWorkflow {}

@Application({
  name: "card-application",
  workflows: [CardWorkflow],
  providers: [Vault, ScriptedModelProvider, MailCardApprovalChannel],
  piiPolicies: [replaceWithToken(PiiDetector.sensitiveFields()), replaceWithToken(PiiDetector.email())],
})
class CardApplication {}

const manager = { tenantId: "acme", answeredBy: "manager-17" } as const;

/** Everything the model read, as one text. */
const seen = (request: ChatRequest | undefined) => JSON.stringify(request?.messages ?? []);

/** The token the request shows for the card number in the pause's question. */
function cardToken(request: ChatRequest): string {
  const user = request.messages.find((m) => m.role === "user")?.content ?? "";
  const ask = user.slice(0, user.indexOf("### reply"));
  return ask.match(TOKEN)?.[0] ?? "no token";
}

onEachBackend(CardApplication, (test) => {
  async function askRefund(app: App, mockLlm: (c: AnyClass) => ModelScript, threadId: string) {
    const text = `refund ${threadId}`;
    mockLlm(CardAgent)
      .when((r) => r.messages.find((m) => m.role === "user")?.content === text)
      .thenReturn(
        callTool(CardRefundTool, { orderId: "ord_9", amountCents: 1000, cardNumber: CARD }),
        replyWith("Refund handled"),
      );
    const result = await app.execute(
      CardWorkflowStart,
      { text },
      { threadId, ownerId: "alice", tenant: acme },
    );
    const pause = (
      await app.store.pauses.list({ tenantId: "acme", threadId, statuses: [PauseStatus.Pending] })
    )[0];
    return { result, pauseId: pause?.pauseId as string, threadKey: `acme/${threadId}` };
  }

  test("[RP-07] the interpreter's model reads sensitive fields and e-mails as tokens; tokens in its answer are revealed before validation and the tool gets the real values", async ({
    app,
    openApp,
    mockLlm,
  }) => {
    const { pauseId } = await askRefund(app, mockLlm, "t-rp7");
    const interpreter = mockLlm(CardReplyInterpreter);
    interpreter.thenReturn((request) =>
      replyWith(ToolCallApprovalDecisionDto, {
        approved: true,
        overrideArguments: { orderId: "ord_9", amountCents: 500, cardNumber: cardToken(request) },
      }),
    );
    const other = await openApp();
    const done = await other.resume({ pauseId, reply: "ok, half only. jo@example.com" }, manager);
    expect(done.status).toBe(ExecutionStatus.Completed);
    const read = seen(interpreter.calls[0]);
    expect(read).not.toContain("4111");
    expect(read).not.toContain("jo@example.com");
    expect(cardToken(interpreter.calls[0] as ChatRequest)).toMatch(TOKEN);
    expect(interpreter.calls[0]?.messages[1]?.content).toMatch(/### reply\nok, half only\. ⟦pii:\d+⟧$/);
    expect(other.get(Vault).refunds).toEqual([{ orderId: "ord_9", amountCents: 500, cardNumber: CARD }]);
  });

  test("[RP-07] a token no map knows is a decline: UninterpretableReplyError, the pause stays Pending", async ({
    app,
    mockLlm,
    store,
  }) => {
    const { pauseId, threadKey } = await askRefund(app, mockLlm, "t-rp7-unknown");
    mockLlm(CardReplyInterpreter).thenReturn(
      replyWith(ToolCallApprovalDecisionDto, {
        approved: true,
        overrideArguments: { orderId: "ord_9", amountCents: 500, cardNumber: "⟦pii:99⟧" },
      }),
    );
    const before = await frozen(store, "acme", pauseId, threadKey);
    const error = (await app.resume({ pauseId, reply: "half" }, manager).catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(UninterpretableReplyError);
    expect(error.cause).toBeInstanceOf(PiiUnknownTokenError);
    expect((error.cause as PiiUnknownTokenError).tokens).toEqual(["⟦pii:99⟧"]);
    expect(await frozen(store, "acme", pauseId, threadKey)).toBe(before);
    expect(app.get(Vault).refunds).toEqual([]);
  });

  test("[RP-07] a blockWithRefusal value in the reply throws PiiRefusedError; the model is not called and the pause is untouched", async ({
    app,
    mockLlm,
    store,
  }) => {
    const { pauseId, threadKey } = await askRefund(app, mockLlm, "t-rp7-block");
    const interpreter = mockLlm(CardReplyInterpreter);
    const before = await frozen(store, "acme", pauseId, threadKey);
    const error = (await app
      .resume({ pauseId, reply: "approve, ref TOPSECRET-42" }, manager)
      .catch((e: unknown) => e)) as PiiRefusedError;
    expect(error).toBeInstanceOf(PiiRefusedError);
    expect(error.code).toBe("pii.refused");
    expect(error.detector).toBe("internal-secret");
    expect(error.message).not.toContain("TOPSECRET-42");
    expect(interpreter.calls).toHaveLength(0);
    expect(await frozen(store, "acme", pauseId, threadKey)).toBe(before);
  });

  test("[AU-01] the audit trail's decision is masked by the PII policies: what a person wrote keeps no card number or e-mail", async ({
    app,
    openApp,
    mockLlm,
  }) => {
    const { pauseId } = await askRefund(app, mockLlm, "t-au-pii");
    const other = await openApp();
    const done = await other.resume(
      {
        pauseId,
        decision: {
          approved: false,
          reason: `card ${CARD} is jo@example.com's; order ord_9 stays`,
        },
      },
      { ...manager, record: true },
    );
    expect(done.status).toBe(ExecutionStatus.Completed);
    const entry = done.record?.pauses[0];
    expect(entry?.decision).toEqual({
      approved: false,
      reason: "card *** is ***'s; order ord_9 stays",
    });
    const stored = await other.record(done.executionId, { tenantId: "acme" });
    expect(JSON.stringify(stored?.pauses)).not.toMatch(/4111|jo@example\.com/);
    // The model read the reason through the same policies: a token, never the number.
    expect(seen(mockLlm(CardAgent).calls.at(-1))).not.toContain("4111");
  });

  test("an agent's model reads a card number as a token on every turn; its tool call is revealed and the tool gets the number", async ({
    app,
    mockLlm,
  }) => {
    const text = `who holds ${CARD}?`;
    const agent = mockLlm(CardAgent);
    agent
      .when((r) => (r.messages[1]?.content ?? "").startsWith("who holds"))
      .thenReturn((request) =>
        callTool(CardLookupTool, { cardNumber: request.messages[1]?.content.match(TOKEN)?.[0] }),
      )
      .thenReturn((request) =>
        replyWith(`${request.messages[1]?.content.match(TOKEN)?.[0]} is held by Jo Doe`),
      );
    const result = await app.execute(CardWorkflowStart, { text }, { ownerId: "alice", tenant: acme });
    expect(result.output).toEqual({ text: `${CARD} is held by Jo Doe` });
    expect(app.get(Vault).lookups).toEqual([CARD]);
    const [first, second] = agent.calls;
    expect(seen(first)).not.toContain("4111");
    expect(seen(second)).not.toContain("4111");
    const token = first?.messages[1]?.content.match(TOKEN)?.[0];
    const call = second?.messages.find((m) => m.role === "assistant");
    expect(call?.role === "assistant" ? call.toolCalls?.[0]?.arguments : undefined).toEqual({
      cardNumber: token,
    });
  });

  test("an agent's model that calls a tool with an unknown token reads a tool error; the tool does not run", async ({
    app,
    mockLlm,
  }) => {
    const agent = mockLlm(CardAgent);
    agent.thenReturn(
      callTool(CardLookupTool, { cardNumber: "⟦pii:41⟧" }),
      replyWith("I could not look it up"),
    );
    const result = await app.execute(
      CardWorkflowStart,
      { text: "who holds my card?" },
      { ownerId: "alice", tenant: acme },
    );
    expect(result.output).toEqual({ text: "I could not look it up" });
    expect(app.get(Vault).lookups).toEqual([]);
    expect(agent.calls[1]?.messages.at(-1)?.content).toMatch(/^Tool error: ⟦pii:41⟧ stands for no value/);
  });

  test("a blockWithRefusal value in an agent's input fails the execution with PiiRefusedError before its model is called", async ({
    app,
    mockLlm,
  }) => {
    const agent = mockLlm(CardAgent);
    await expect(
      app.execute(CardWorkflowStart, { text: "see TOPSECRET-7" }, { ownerId: "alice", tenant: acme }),
    ).rejects.toBeInstanceOf(PiiRefusedError);
    expect(agent.calls).toHaveLength(0);
  });
});
