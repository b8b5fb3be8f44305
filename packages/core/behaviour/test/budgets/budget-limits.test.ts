import {
  Agent,
  type AnyClass,
  type App,
  Application,
  AssemblyError,
  BudgetExceededError,
  BudgetPer,
  budget,
  Channel,
  ChannelOf,
  ChannelOutcome,
  ChannelRole,
  type ChatRequest,
  callTool,
  createApp,
  DecidedBy,
  days,
  ExecutionStatus,
  MemoryStore,
  ModelProvider,
  type ModelProviderHandler,
  PauseAnswerer,
  PauseStatus,
  ReplyInterpreter,
  replyWith,
  StoreUnavailableError,
  start,
  Tool,
  ToolCallApprovalDecisionDto,
  UninterpretableReplyError,
  Workflow,
  WorkflowFinish,
  WorkflowFinishTextDto,
  WorkflowStart,
  WorkflowStartTextDto,
} from "@agboss/core";
import type { ModelScript } from "@agboss/testing";
import { describe, expect, test as plainTest, vi } from "vitest";
import { frozen, memoryBackend, onEachBackend } from "../../src/backends.js";
import { Desk, DoneDto, ExpenseDto } from "../../src/fixtures/approval-app.js";
import {
  ChatExpenseApprovalChannel,
  ChatRefundApprovalChannel,
  DeskAgent,
  ExpenseReplyInterpreter,
  WordyExpenseTool,
} from "../../src/fixtures/interpreter-app.js";
import { ScriptedModelProvider } from "../../src/fixtures/refund-app.js";
import { acme } from "../../src/office.js";

const owner = { tenantId: "acme", ownerId: "alice" } as const;
const usage = (inputTokens: number, outputTokens: number) => ({ usage: { inputTokens, outputTokens } });

@WorkflowStart({ name: "metered-workflow-start", description: "A request", input: WorkflowStartTextDto })
class MeteredStart {}

@WorkflowFinish({ name: "metered-workflow-finish", description: "The answer", output: WorkflowFinishTextDto })
class MeteredFinish {}

@Workflow({
  name: "metered-workflow",
  version: "1.0.0",
  flow: [start(MeteredStart).toAgent(DeskAgent).toFinish(MeteredFinish)],
  budgets: [budget({ name: "shared-calls", modelCalls: 20, per: BudgetPer.Application })],
  executionBudget: { tokens: 1_000 },
})
class MeteredWorkflow {}

@Application({
  name: "metered-application",
  workflows: [MeteredWorkflow],
  providers: [Desk, ScriptedModelProvider, ChatRefundApprovalChannel, ChatExpenseApprovalChannel],
  budgets: [budget({ name: "daily-calls", modelCalls: 2, window: days(1) })],
})
class MeteredApplication {}

async function askExpense(
  app: App,
  mockLlm: (c: AnyClass) => ModelScript,
  threadId: string,
  options: { budget?: { modelCalls?: number; tokens?: number } } = {},
) {
  const text = `book on ${threadId}`;
  mockLlm(DeskAgent)
    .when((r) => r.messages.find((m) => m.role === "user")?.content === text)
    .thenReturn(
      { ...callTool(WordyExpenseTool, { purpose: "team lunch", amountCents: 4200 }), ...usage(40, 20) },
      { ...replyWith("Expense handled"), ...usage(30, 10) },
    );
  const result = await app.execute(
    MeteredStart,
    { text },
    { threadId, ownerId: "alice", tenant: acme, ...options },
  );
  return { result, pauseId: result.pending[0]?.pauseId as string, threadKey: `acme/${threadId}` };
}

onEachBackend(MeteredApplication, (test) => {
  test("[RP-06] an interpreter's call is checked before it is made (used up: BudgetExceededError, the pause untouched), counted in the ledger at once, in the execution's spend once when the step takes the answer, and traced as reply-interpreter:<name>", async ({
    app,
    mockLlm,
    store,
    clock,
    logger,
  }) => {
    const { pauseId, threadKey, result } = await askExpense(app, mockLlm, "t-rp6");
    const interpreter = mockLlm(ExpenseReplyInterpreter);
    interpreter
      .when({ reply: "garbled" })
      .thenReturn({ ...replyWith("they approve, I think"), ...usage(7, 3) })
      .when({ reply: "yes, book it" })
      .thenReturn({ ...replyWith(ToolCallApprovalDecisionDto, { approved: true }), ...usage(100, 20) });
    // The declined read spends the second of the day's two calls: it is counted at once.
    await expect(app.resume({ pauseId, reply: "garbled" }, owner)).rejects.toBeInstanceOf(
      UninterpretableReplyError,
    );
    const before = await frozen(store, "acme", pauseId, threadKey);
    const refused = (await app
      .resume({ pauseId, reply: "yes, book it" }, owner)
      .catch((e: unknown) => e)) as BudgetExceededError;
    expect(refused).toBeInstanceOf(BudgetExceededError);
    expect(refused.code).toBe("budget.exceeded");
    expect(refused.details).toMatchObject({
      budget: "daily-calls",
      level: "application",
      limit: "modelCalls",
      max: 2,
      spent: 2,
      tenantId: "acme",
      caller: "reply-interpreter:expense-reply-interpreter",
    });
    expect(refused.message).toContain("@Application({ budgets })");
    expect(interpreter.calls).toHaveLength(1);
    expect(await frozen(store, "acme", pauseId, threadKey)).toBe(before);

    await clock.advance(days(1));
    const done = await app.resume({ pauseId, reply: "yes, book it" }, owner);
    expect(done.status).toBe(ExecutionStatus.Completed);
    const record = await app.record(result.executionId, { tenantId: "acme" });
    const read = record?.steps.filter(
      (s) => s.type === "model" && s.caller?.startsWith("reply-interpreter:"),
    );
    expect(read).toEqual([
      expect.objectContaining({
        caller: "reply-interpreter:expense-reply-interpreter",
        model: "scripted/interpreter",
        usage: { inputTokens: 100, outputTokens: 20 },
        step: expect.objectContaining({ toolCall: expect.objectContaining({ tool: "book-expense-tool" }) }),
      }),
    ]);
    // Two agent turns and the one read whose answer the step took; the declined read is not the execution's.
    expect(record?.usage).toEqual({ modelCalls: 3, inputTokens: 170, outputTokens: 50 });
    const traced = logger.entries.filter(
      (e) => e.event === "model.call" && e.fields.caller === "reply-interpreter:expense-reply-interpreter",
    );
    expect(traced.map((e) => [e.fields.executionId, e.fields.inputTokens])).toEqual([
      [result.executionId, 7],
      [result.executionId, 100],
    ]);
  });

  test("an agent's loop stops when its execution's budget is used up: the execution fails with BudgetExceededError", async ({
    app,
    mockLlm,
  }) => {
    // 60 tokens in the first turn; the execution may spend 50.
    const { pauseId, result } = await askExpense(app, mockLlm, "t-agent-budget", { budget: { tokens: 50 } });
    const thrown = await app
      .resume({ pauseId, decision: { approved: true } }, owner)
      .catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(BudgetExceededError);
    expect((thrown as BudgetExceededError).details).toMatchObject({
      level: "execution",
      limit: "tokens",
      max: 50,
      spent: 60,
      caller: "agent:desk-agent",
    });
    expect(app.get(Desk).expenses).toHaveLength(1);
    expect(
      mockLlm(DeskAgent).calls.filter((c) => c.messages[1]?.content === "book on t-agent-budget"),
    ).toHaveLength(1);
    const record = await app.record(result.executionId, { tenantId: "acme" });
    expect(record).toMatchObject({
      status: ExecutionStatus.Failed,
      error: { code: "budget.exceeded" },
      budget: { tokens: 50 },
    });
  });

  test("a workflow budget per application is shared by every tenant", async ({ app, mockLlm }) => {
    mockLlm(DeskAgent).thenReturn(replyWith("hello"));
    await expect(
      app.execute(MeteredStart, { text: "hi" }, { ownerId: "bob", tenant: { tenantId: "other" } }),
    ).resolves.toMatchObject({ status: ExecutionStatus.Completed });
    const ledger = app.store.budgets;
    if (ledger === undefined) return; // counted in the process only: nothing to read back.
    const [shared] = await ledger.read([
      { tenantId: "*", budget: "workflow/metered-workflow/shared-calls", windowStart: 0 },
    ]);
    expect(shared?.modelCalls).toBe(1);
  });
});

// The SQLite store keeps no budget ledger yet, so two apps on it count apart: this runs on memory only.
onEachBackend(
  MeteredApplication,
  (test) => {
    test("[RP-06] the execution's budget and its ledger hold across instances sharing the store", async ({
      app,
      openApp,
      mockLlm,
      store,
    }) => {
      const { pauseId, threadKey, result } = await askExpense(app, mockLlm, "t-rp6-shared", {
        budget: { modelCalls: 1 },
      });
      mockLlm(ExpenseReplyInterpreter).thenReturn(replyWith(ToolCallApprovalDecisionDto, { approved: true }));
      const other = await openApp();
      const before = await frozen(store, "acme", pauseId, threadKey);
      await expect(other.resume({ pauseId, reply: "sure" }, owner)).rejects.toMatchObject({
        code: "budget.exceeded",
        details: { level: "execution", limit: "modelCalls", spent: 1, max: 1 },
      });
      expect(await frozen(store, "acme", pauseId, threadKey)).toBe(before);
      expect((await store.pauses.findByTenantIdAndPauseId("acme", pauseId))?.status).toBe(
        PauseStatus.Pending,
      );
      expect(result.status).toBe(ExecutionStatus.Paused);
    });

    test("a store fault while the interpreter's call is checked reaches the caller as StoreUnavailableError, to retry, not as an unreadable reply; the pause keeps waiting and the retry is read", async ({
      app,
      openApp,
      mockLlm,
      store,
      clock,
    }) => {
      const { pauseId, result } = await askExpense(app, mockLlm, "t-reply-fault", {
        budget: { modelCalls: 5 },
      });
      mockLlm(ExpenseReplyInterpreter).thenReturn(replyWith(ToolCallApprovalDecisionDto, { approved: true }));
      // Another instance, which has not seen the execution: it reads the execution's budget from the store.
      const other = await openApp();
      const read = vi
        .spyOn(store.executions, "findByTenantIdAndExecutionId")
        .mockRejectedValueOnce(new StoreUnavailableError("the database went away"));
      const failed = await other.resume({ pauseId, reply: "sure" }, owner).catch((e: unknown) => e);
      read.mockRestore();
      expect(failed).toBeInstanceOf(StoreUnavailableError);
      expect((await store.pauses.findByTenantIdAndPauseId("acme", pauseId))?.status).toBe(
        PauseStatus.Pending,
      );
      // The application's two model calls a day are spent by now: the retry comes the next day.
      await clock.advance(days(1));
      const done = await other.resume({ pauseId, reply: "sure" }, owner);
      expect(done.status).toBe(ExecutionStatus.Completed);
      expect(done.executionId).toBe(result.executionId);
    });
  },
  {},
  [memoryBackend],
);

/** A provider that serves `metered/*` and records what it was asked. */
@ModelProvider({ name: "recording-model-provider", serves: ["metered/*"] })
class RecordingModelProvider implements ModelProviderHandler {
  static readonly requests: ChatRequest[] = [];
  chatModel() {
    return {
      invoke: (request: ChatRequest) => {
        RecordingModelProvider.requests.push(request);
        if (request.caller.startsWith("reply-interpreter:"))
          return Promise.resolve(replyWith(ToolCallApprovalDecisionDto, { approved: true }));
        const answered = request.messages.some((m) => m.role === "tool");
        return Promise.resolve(
          answered
            ? replyWith("booked")
            : callTool(ServedExpenseTool, { purpose: "lunch", amountCents: 100 }),
        );
      },
    };
  }
}

function interpreterApp(model: string) {
  @ReplyInterpreter({
    name: "served-reply-interpreter",
    description: "Reads a reply",
    decidedBy: DecidedBy.Model,
    model,
  })
  class ServedReplyInterpreter {}

  @ChannelRole({
    name: "served-approval-channel",
    description: "Asks in words",
    approves: ExpenseDto,
    answeredBy: PauseAnswerer.ThreadOwner,
    replyInterpreter: ServedReplyInterpreter,
  })
  abstract class ServedApprovalChannel extends ChannelOf<ServedApprovalChannel> {}

  @Channel({ name: "chat-served-approval-channel", description: "Asks in the chat" })
  class ChatServedApprovalChannel extends ServedApprovalChannel {
    send(): Promise<ChannelOutcome<ServedApprovalChannel>> {
      return Promise.resolve(ChannelOutcome.awaitReply());
    }
  }

  @Tool({
    name: "served-expense-tool",
    description: "Books an expense",
    input: ExpenseDto,
    output: DoneDto,
    channel: ServedApprovalChannel,
  })
  class Booking {
    run(): Promise<DoneDto> {
      return Promise.resolve({ status: "booked" });
    }
  }
  ServedExpenseTool = Booking;

  @Agent({
    name: "served-agent",
    description: "Books",
    prompt: "Book.",
    model: "metered/agent",
    tools: [Booking],
  })
  class ServedAgent {}

  @WorkflowStart({ name: "served-workflow-start", description: "A request", input: WorkflowStartTextDto })
  class ServedStart {}

  @WorkflowFinish({
    name: "served-workflow-finish",
    description: "The answer",
    output: WorkflowFinishTextDto,
  })
  class ServedFinish {}

  @Workflow({
    name: "served-workflow",
    version: "1.0.0",
    flow: [start(ServedStart).toAgent(ServedAgent).toFinish(ServedFinish)],
  })
  class ServedWorkflow {}

  @Application({
    name: "served-application",
    workflows: [ServedWorkflow],
    providers: [RecordingModelProvider, ChatServedApprovalChannel],
    budgets: [budget({ name: "calls", modelCalls: 10 })],
  })
  class ServedApplication {}
  return { ServedApplication, ServedStart };
}

let ServedExpenseTool: AnyClass = Object;

describe("an interpreter's model comes from a provider", () => {
  plainTest(
    "[RP-06] an interpreter's model resolves its provider by serves; one no provider serves is [model.unserved] at assembly",
    async () => {
      const broken = interpreterApp("nobody/serves-this");
      const error = (await createApp(broken.ServedApplication, { store: () => new MemoryStore() }).catch(
        (e: unknown) => e,
      )) as AssemblyError;
      expect(error).toBeInstanceOf(AssemblyError);
      expect(error.violations).toEqual([
        expect.objectContaining({
          rule: "model.unserved",
          message: expect.stringContaining('"nobody/serves-this"'),
        }),
      ]);

      const served = interpreterApp("metered/interpreter");
      const store = new MemoryStore();
      const app = await createApp(served.ServedApplication, { store: () => store });
      try {
        const paused = await app.execute(served.ServedStart, { text: "book lunch" }, { ownerId: "alice" });
        const pauseId = paused.pending[0]?.pauseId as string;
        const done = await app.resume({ pauseId, reply: "yes" }, { ownerId: "alice" });
        expect(done.status).toBe(ExecutionStatus.Completed);
        const asked = RecordingModelProvider.requests.find(
          (r) => r.caller === "reply-interpreter:served-reply-interpreter",
        );
        expect(asked?.model).toBe("metered/interpreter");
        const [spent] = await store.budgets.read([
          { tenantId: "default", budget: "application/calls", windowStart: 0 },
        ]);
        expect(spent?.modelCalls).toBe(3);
      } finally {
        await app.close();
      }
    },
  );
});
