import {
  Agent,
  type App,
  Application,
  Channel,
  type ChannelAsk,
  ChannelOf,
  ChannelOutcome,
  ChannelRole,
  callTool,
  createApp,
  DecidedBy,
  type DecisionModel,
  type DecisionRequest,
  Dto,
  ExecutionStatus,
  Injectable,
  ModelProvider,
  type ModelProviderHandler,
  memoryStore,
  NotPausedError,
  PauseAnswerer,
  PauseStatus,
  ReplyInterpreter,
  replyWith,
  ScriptedChatModel,
  type ScriptedTurn,
  start,
  Tool,
  ToolCallApprovalDecisionDto,
  type ToolHandler,
  UninterpretableReplyError,
  UnknownPauseError,
  Workflow,
  WorkflowFinish,
  WorkflowFinishTextDto,
  WorkflowStart,
  WorkflowStartTextDto,
} from "@agboss/core";
import { sqliteStore } from "@agboss/store-sqlite";
import { decideWith, type ModelScript, TestSetupError } from "@agboss/testing";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { onEachBackend, sqliteFile } from "../../src/backends.js";
import { Desk } from "../../src/fixtures/approval-app.js";
import {
  DeskAgent,
  DeskApplication,
  DeskWorkflowStart,
  ExpenseReplyInterpreter,
  WordyExpenseTool,
  WordyRefundTool,
} from "../../src/fixtures/interpreter-app.js";
import { acme } from "../../src/office.js";

// The framework's question, before the interpreter's prompt (packages/core/src/answering/reply-reading.ts).
const FRAMEWORK_QUESTION =
  "A person answered the question below in their own words. Does their reply approve the request? Answer yes or no.";
const CLERK_PROMPT = "The clerk answered a deposit return.";

class DepositReturnDto extends Dto({
  depositId: z.string().min(1),
  amountCents: z.number().int().positive(),
}) {}
class ReturnedDto extends Dto({ status: z.string() }) {}

/** What the deposit tool did, what the channel was asked, and the scripted models' queues. */
@Injectable()
class DepositDesk {
  readonly returned: DepositReturnDto[] = [];
  readonly asked: string[] = [];
}

/** Turns the scripted agent model plays and P(yes) answers the decision model gives, shared by every app. */
const scripted = {
  agentTurns: [] as ScriptedTurn[],
  probabilities: [] as number[],
  decisions: [] as DecisionRequest[],
  chatModelsAsked: [] as string[],
};

@ReplyInterpreter({
  name: "deposit-reply-interpreter",
  description: "Reads whether a clerk's reply approves a deposit return",
  decidedBy: DecidedBy.Model,
  model: "typesafe/jev-1.13",
  prompt: CLERK_PROMPT,
})
class DepositReplyInterpreter {}

@ChannelRole({
  name: "deposit-approval-channel",
  description: "A clerk approves deposit returns",
  approves: DepositReturnDto,
  answeredBy: PauseAnswerer.Channel,
  replyInterpreter: DepositReplyInterpreter,
})
abstract class DepositApprovalChannel extends ChannelOf<DepositApprovalChannel> {}

@Channel({
  name: "chat-deposit-approval-channel",
  description: "Asks the clerk in the chat",
  deps: [DepositDesk],
})
class ChatDepositApprovalChannel extends DepositApprovalChannel {
  constructor(private readonly desk: DepositDesk) {
    super();
  }
  send(ask: ChannelAsk<DepositApprovalChannel>): Promise<ChannelOutcome<DepositApprovalChannel>> {
    this.desk.asked.push(ask.pauseId);
    return Promise.resolve(ChannelOutcome.awaitReply());
  }
}

@Tool({
  name: "return-deposit-tool",
  description: "Returns a deposit",
  input: DepositReturnDto,
  output: ReturnedDto,
  channel: DepositApprovalChannel,
  deps: [DepositDesk],
})
class ReturnDepositTool implements ToolHandler<DepositReturnDto, ReturnedDto> {
  constructor(private readonly desk: DepositDesk) {}
  run(input: DepositReturnDto): Promise<ReturnedDto> {
    this.desk.returned.push(input);
    return Promise.resolve({ status: `returned ${input.depositId}` });
  }
}

@Agent({
  name: "deposit-agent",
  description: "Returns deposits",
  prompt: "Return the deposit asked for.",
  model: "scripted/deposits",
  tools: [ReturnDepositTool],
})
class DepositAgent {}

@WorkflowStart({ name: "deposit-workflow-start", description: "A request", input: WorkflowStartTextDto })
class DepositWorkflowStart {}

@WorkflowFinish({ name: "deposit-workflow-finish", description: "The answer", output: WorkflowFinishTextDto })
class DepositWorkflowFinish {}

@Workflow({
  name: "deposit-workflow",
  version: "1.0.0",
  flow: [start(DepositWorkflowStart).toAgent(DepositAgent).toFinish(DepositWorkflowFinish)],
})
class DepositWorkflow {}

/** Serves the agent's scripted model and the `typesafe/*` decision models, which it lists in `decides`. */
@ModelProvider({
  name: "typesafe-model-provider",
  serves: ["scripted/*", "typesafe/*"],
  decides: ["typesafe/*"],
})
class TypesafeModelProvider implements ModelProviderHandler {
  chatModel(modelId: string) {
    scripted.chatModelsAsked.push(modelId);
    return {
      invoke: (request: Parameters<ScriptedChatModel["invoke"]>[0]) => {
        const turn = scripted.agentTurns.shift();
        return new ScriptedChatModel(turn === undefined ? [] : [turn]).invoke(request);
      },
    };
  }

  decisionModel(): DecisionModel {
    return {
      decide: (request) => {
        scripted.decisions.push(request);
        const p = scripted.probabilities.shift();
        if (p === undefined) return Promise.reject(new Error("no probability scripted"));
        return Promise.resolve({ probabilityYes: p, usage: { inputTokens: 90, outputTokens: 1 } });
      },
    };
  }
}

@Application({
  name: "deposit-application",
  workflows: [DepositWorkflow],
  providers: [DepositDesk, TypesafeModelProvider, ChatDepositApprovalChannel],
})
class DepositApplication {}

const clerk = { tenantId: "acme", answeredBy: "clerk-1" } as const;

/** Starts a deposit return whose tool call waits for the clerk; the agent's turns are scripted by `mockLlm`. */
async function askDeposit(app: App, mockLlm: (c: typeof DepositAgent) => ModelScript, depositId: string) {
  const text = `return ${depositId}`;
  mockLlm(DepositAgent)
    .when((r) => r.messages.find((m) => m.role === "user")?.content === text)
    .thenReturn(
      callTool(ReturnDepositTool, { depositId, amountCents: 5000 }),
      replyWith(`Handled ${depositId}`),
    );
  const result = await app.execute(
    DepositWorkflowStart,
    { text },
    { threadId: `t-${depositId}`, ownerId: "alice", tenant: acme },
  );
  expect(result.status).toBe(ExecutionStatus.Paused);
  // The clerk answers through the channel, so the pause is not among the owner's pending ones.
  return { result, pauseId: app.get(DepositDesk).asked.at(-1) as string };
}

/** The last tool message the agent read: the result of the approved call, or the refusal. */
function lastToolMessage(mockLlm: (c: typeof DepositAgent) => ModelScript): string | undefined {
  return mockLlm(DepositAgent)
    .calls.at(-1)
    ?.messages.findLast((m) => m.role === "tool")?.content;
}

onEachBackend(DepositApplication, (test) => {
  test("[RP-05] a decision model reads only yes / no: 0.9 approves, 0.2 and exactly 0.5 refuse, and the answer is { approved } alone", async ({
    app,
    openApp,
    mockLlm,
    store,
  }) => {
    const interpreter = mockLlm(DepositReplyInterpreter);
    interpreter.when({ reply: "fine, give it back" }).thenReturn(decideWith({ approved: 0.9 }));
    interpreter.when({ reply: "the flat is damaged" }).thenReturn(decideWith({ approved: 0.2 }));
    interpreter.when({ reply: "not sure" }).thenReturn(decideWith({ approved: 0.5 }));

    const approved = await askDeposit(app, mockLlm, "dep-1");
    const other = await openApp();
    const done = await other.resume({ pauseId: approved.pauseId, reply: "fine, give it back" }, clerk);
    expect(done).toMatchObject({ status: ExecutionStatus.Completed, output: { text: "Handled dep-1" } });
    // No overrideArguments: the tool ran with the arguments the agent gave.
    expect(other.get(DepositDesk).returned).toEqual([{ depositId: "dep-1", amountCents: 5000 }]);
    const record = await store.pauses.findByTenantIdAndPauseId("acme", approved.pauseId);
    expect(record?.answer?.decision).toEqual({ approved: true });
    expect(record?.answer?.cost).toMatchObject({
      interpreter: "deposit-reply-interpreter",
      model: "typesafe/jev-1.13",
      probabilityYes: 0.9,
    });

    for (const [depositId, reply] of [
      ["dep-2", "the flat is damaged"],
      ["dep-3", "not sure"],
    ] as const) {
      const { pauseId } = await askDeposit(app, mockLlm, depositId);
      expect((await app.resume({ pauseId, reply }, clerk)).status).toBe(ExecutionStatus.Completed);
      // Refused without a reason: a decision model has none to give.
      expect(lastToolMessage(mockLlm)).toBe("Tool error: the call was rejected by clerk-1");
      const refused = await store.pauses.findByTenantIdAndPauseId("acme", pauseId);
      expect(refused?.answer?.decision).toEqual({ approved: false });
    }
    expect(app.get(DepositDesk).returned).toEqual([]);
    expect(interpreter.calls).toEqual([]);
    expect(interpreter.remaining).toBe(0);
  });

  test('[RP-05] the decision model is asked one Decision.noul("approved"): the framework\'s question then the prompt as instructions, ### ask and ### reply as input', async ({
    app,
    mockLlm,
  }) => {
    const interpreter = mockLlm(DepositReplyInterpreter).thenReturn(decideWith({ approved: 0.9 }));
    const { pauseId } = await askDeposit(app, mockLlm, "dep-4");
    await app.resume({ pauseId, reply: "ok, return it" }, clerk);
    expect(interpreter.decisions).toHaveLength(1);
    const request = interpreter.decisions[0] as DecisionRequest;
    expect(request.question).toEqual({ field: "approved" });
    expect(request.model).toBe("typesafe/jev-1.13");
    expect(request.instructions).toBe(`${FRAMEWORK_QUESTION}\n\n${CLERK_PROMPT}`);
    expect(request.input.startsWith("### ask\n")).toBe(true);
    expect(request.input).toContain('"depositId": "dep-4"');
    expect(request.input).toContain('"tool": "return-deposit-tool"');
    expect(request.input.endsWith("\n\n### reply\nok, return it")).toBe(true);
    expect(request.caller).toBe("reply-interpreter:deposit-reply-interpreter");
    // No chat call, so no answer tool: the model can give nothing but yes / no.
    expect(interpreter.calls).toEqual([]);
  });

  test("[TK-05] mockLlm(DecisionInterpreter).thenReturn(decideWith({ approved: 0.9 })) scripts a decision model; a chat turn in its place fails clearly", async ({
    app,
    mockLlm,
    store,
  }) => {
    expect(() => decideWith({ approved: 1.5 })).toThrow(TestSetupError);
    expect(() => decideWith({ approved: 0.9, reason: 0.1 })).toThrow(/exactly one field/);
    const interpreter = mockLlm(DepositReplyInterpreter);
    interpreter.thenReturn(
      replyWith(ToolCallApprovalDecisionDto, { approved: true }),
      decideWith({ approved: 0.9 }),
    );
    interpreter.when({ reply: /^no\b/ }).thenReturn(decideWith({ approved: 0.1 }));

    const { pauseId } = await askDeposit(app, mockLlm, "dep-5");
    const wrong = (await app
      .resume({ pauseId, reply: "yes, go ahead" }, clerk)
      .catch((e: unknown) => e)) as UninterpretableReplyError;
    expect(wrong).toBeInstanceOf(UninterpretableReplyError);
    expect(wrong.cause).toBeInstanceOf(TestSetupError);
    expect(wrong.reason).toContain('asked its decision model a yes / no question about "approved"');
    expect(wrong.reason).toContain("Script it with decideWith({ approved: 0.9 })");
    expect((await store.pauses.findByTenantIdAndPauseId("acme", pauseId))?.status).toBe(PauseStatus.Pending);

    expect((await app.resume({ pauseId, reply: "yes, go ahead" }, clerk)).status).toBe(
      ExecutionStatus.Completed,
    );
    expect(app.get(DepositDesk).returned).toHaveLength(1);

    const refused = await askDeposit(app, mockLlm, "dep-6");
    await app.resume({ pauseId: refused.pauseId, reply: "no, keep it" }, clerk);
    expect(app.get(DepositDesk).returned).toHaveLength(1);
    expect(interpreter.decisions.map((d) => d.input.split("### reply\n")[1])).toEqual([
      "yes, go ahead",
      "yes, go ahead",
      "no, keep it",
    ]);
    expect(interpreter.remaining).toBe(0);
  });
});

onEachBackend(DeskApplication, (test) => {
  test("[TK-05] decideWith(…) scripted for a chat-model interpreter fails clearly and the pause keeps waiting", async ({
    app,
    mockLlm,
  }) => {
    mockLlm(DeskAgent).thenReturn(
      callTool(WordyExpenseTool, { purpose: "team lunch", amountCents: 4200 }),
      replyWith("Expense handled"),
    );
    mockLlm(ExpenseReplyInterpreter).thenReturn(decideWith({ approved: 0.9 }));
    const result = await app.execute(
      DeskWorkflowStart,
      { text: "book lunch" },
      { threadId: "t-tk5-chat", ownerId: "alice", tenant: acme },
    );
    const pauseId = result.pending[0]?.pauseId as string;
    const error = (await app
      .resume({ pauseId, reply: "sure" }, { tenantId: "acme", ownerId: "alice" })
      .catch((e: unknown) => e)) as UninterpretableReplyError;
    expect(error).toBeInstanceOf(UninterpretableReplyError);
    expect(error.cause).toBeInstanceOf(TestSetupError);
    expect(error.reason).toContain("is decideWith(…), which only a decision model plays");
  });

  test("[HW-04] the webhook pattern maps an unreadable reply to 422 with err.reason, a duplicate to 200, an unknown pause to 404", async ({
    app,
    mockLlm,
  }) => {
    /** A webhook handler of the pattern: what app.resume throws becomes the HTTP answer. */
    async function handleReply(body: { pauseId: string; reply: string }) {
      try {
        const result = await app.resume(body, { tenantId: "acme", answeredBy: "manager-17" });
        return { httpStatus: 200, body: { status: result.status } as Record<string, unknown> };
      } catch (err) {
        if (err instanceof UninterpretableReplyError)
          return { httpStatus: 422, body: { clarify: err.reason } };
        if (err instanceof NotPausedError)
          return { httpStatus: 200, body: { status: "already_resolved", by: err.responder } };
        if (err instanceof UnknownPauseError) return { httpStatus: 404, body: { status: "unknown_pause" } };
        throw err;
      }
    }
    mockLlm(DeskAgent).thenReturn(
      callTool(WordyRefundTool, { orderId: "ord_1", amountCents: 1000 }),
      replyWith("Refund handled"),
    );
    await app.execute(
      DeskWorkflowStart,
      { text: "refund" },
      { threadId: "t-hw4", ownerId: "alice", tenant: acme },
    );
    const pauseId = app.get(Desk).asked.at(-1)?.pauseId as string;

    expect(await handleReply({ pauseId, reply: "hmm, maybe?" })).toEqual({
      httpStatus: 422,
      body: { clarify: "Answer 'approve', 'lgtm' or 'reject: <reason>'." },
    });
    expect(await handleReply({ pauseId, reply: "lgtm" })).toEqual({
      httpStatus: 200,
      body: { status: ExecutionStatus.Completed },
    });
    expect(await handleReply({ pauseId, reply: "lgtm" })).toEqual({
      httpStatus: 200,
      body: { status: "already_resolved", by: "manager-17" },
    });
    expect(await handleReply({ pauseId: "no-such-pause", reply: "lgtm" })).toEqual({
      httpStatus: 404,
      body: { status: "unknown_pause" },
    });
  });
});

describe("with the application's own provider (no testing kit)", () => {
  const stores = [
    { name: "memory", open: () => memoryStore() },
    { name: "sqlite", open: () => sqliteStore({ path: sqliteFile() }) },
  ];
  for (const backend of stores) {
    test(`[RP-05] on the ${backend.name} store: the provider whose decides lists the id answers as a decision model, never as a chat model`, async () => {
      scripted.decisions.length = 0;
      scripted.chatModelsAsked.length = 0;
      const app = await createApp(DepositApplication, { env: "test", store: backend.open() });
      try {
        const ask = async (depositId: string) => {
          scripted.agentTurns.push(
            callTool(ReturnDepositTool, { depositId, amountCents: 700 }),
            replyWith(`Handled ${depositId}`),
          );
          const result = await app.execute(
            DepositWorkflowStart,
            { text: `return ${depositId}` },
            { threadId: `own-${depositId}`, ownerId: "alice", tenant: acme },
          );
          expect(result.status).toBe(ExecutionStatus.Paused);
          return app.get(DepositDesk).asked.at(-1) as string;
        };
        scripted.probabilities.push(0.9, 0.2);
        const yes = await ask("dep-a");
        expect((await app.resume({ pauseId: yes, reply: "yes" }, clerk)).status).toBe(
          ExecutionStatus.Completed,
        );
        const no = await ask("dep-b");
        expect((await app.resume({ pauseId: no, reply: "no" }, clerk)).status).toBe(
          ExecutionStatus.Completed,
        );
        expect(app.get(DepositDesk).returned).toEqual([{ depositId: "dep-a", amountCents: 700 }]);
        expect(
          scripted.decisions.map((d) => [d.question.field, d.instructions.endsWith(CLERK_PROMPT)]),
        ).toEqual([
          ["approved", true],
          ["approved", true],
        ]);
        expect(scripted.chatModelsAsked).toEqual(["scripted/deposits"]);
      } finally {
        await app.close();
      }
    });
  }
});
