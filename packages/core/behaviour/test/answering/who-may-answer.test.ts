import {
  Agent,
  Application,
  Channel,
  type ChannelAsk,
  type ChannelHandler,
  ChannelOutcome,
  callTool,
  ExecutionContext,
  ExecutionStatus,
  PauseAnswerer,
  PauseAnswererError,
  replyWith,
  start,
  ThreadOwnerError,
  Tool,
  Workflow,
  WorkflowFinish,
  WorkflowFinishTextDto,
  WorkflowStart,
  WorkflowStartTextDto,
} from "@agboss/core";
import { expect, vi } from "vitest";
import { frozen, onEachBackend } from "../../src/backends.js";
import {
  Desk,
  DoneDto,
  ExpenseDto,
  OfficeApplication,
  TestRefundApprovalChannel,
} from "../../src/fixtures/approval-app.js";
import { ScriptedModelProvider } from "../../src/fixtures/refund-app.js";
import { pauseExpense, pauseRefund, pauseTwo } from "../../src/office.js";

onEachBackend(OfficeApplication, (test) => {
  test("[WH-01] a ThreadOwner pause is answered by the thread's ownerId; another owner is ThreadOwnerError; its id is in pending", async ({
    app,
    openApp,
    mockLlm,
    store,
  }) => {
    const { result, pauseId, threadKey } = await pauseExpense(app, mockLlm);
    expect(result.pending[0]).toMatchObject({ pauseId, answeredBy: PauseAnswerer.ThreadOwner });
    const before = await frozen(store, "acme", pauseId, threadKey);
    const other = await openApp();
    await expect(
      other.resume({ pauseId, decision: { approved: true } }, { tenantId: "acme", ownerId: "mallory" }),
    ).rejects.toBeInstanceOf(ThreadOwnerError);
    expect(await frozen(store, "acme", pauseId, threadKey)).toBe(before);
    const done = await other.resume(
      { pauseId, decision: { approved: true } },
      { tenantId: "acme", ownerId: "alice" },
    );
    expect(done.status).toBe(ExecutionStatus.Completed);
  });

  test("[WH-02] a Channel pause takes a non-empty answeredBy; its id reaches only the channel, never pending or onExecutionPause", async ({
    app,
    mockLlm,
    mockOf,
  }) => {
    const onPause = mockOf(OfficeApplication).onExecutionPause;
    const { result, refundPauseId } = await pauseTwo(app, mockLlm);
    expect(refundPauseId).toEqual(expect.any(String));
    const serialized = JSON.stringify(result.pending);
    expect(serialized).not.toContain(refundPauseId);
    expect(onPause).toHaveBeenCalledTimes(1);
    expect(JSON.stringify(onPause.mock.calls[0]?.[0])).not.toContain(refundPauseId);
    expect(JSON.stringify(await app.pauses.list({ tenantId: "acme" }))).not.toContain(refundPauseId);
    await expect(
      app.resume(
        { pauseId: refundPauseId, decision: { approved: true } },
        { tenantId: "acme", answeredBy: "" },
      ),
    ).rejects.toBeInstanceOf(PauseAnswererError);
    const after = await app.resume(
      { pauseId: refundPauseId, decision: { approved: true } },
      { tenantId: "acme", answeredBy: "manager-17" },
    );
    expect(after.pending).toHaveLength(1);
  });

  test("[WH-03] the wrong kind of credential is PauseAnswererError (pause.wrong-answerer) and the pause keeps waiting", async ({
    app,
    mockLlm,
    store,
  }) => {
    const refund = await pauseRefund(app, mockLlm, "t-wh3-refund");
    const expense = await pauseExpense(app, mockLlm, "t-wh3-expense");
    const b1 = await frozen(store, "acme", refund.pauseId, refund.threadKey);
    const b2 = await frozen(store, "acme", expense.pauseId, expense.threadKey);
    const cases: [string, object][] = [
      [expense.pauseId, { tenantId: "acme", answeredBy: "manager-17" }],
      [refund.pauseId, { tenantId: "acme", ownerId: "alice" }],
      [refund.pauseId, { tenantId: "acme" }],
    ];
    for (const [pauseId, options] of cases) {
      const error = await app
        .resume({ pauseId, decision: { approved: true } }, options as never)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PauseAnswererError);
      expect((error as PauseAnswererError).code).toBe("pause.wrong-answerer");
    }
    expect(await frozen(store, "acme", refund.pauseId, refund.threadKey)).toBe(b1);
    expect(await frozen(store, "acme", expense.pauseId, expense.threadKey)).toBe(b2);
  });

  test("[WH-04] a pauseId is 128 random bits, made once before the first send", async ({
    app,
    mockLlm,
    mockOf,
    store,
  }) => {
    const seenAtSend: unknown[] = [];
    mockOf(TestRefundApprovalChannel).send.mockImplementation(async (ask: ChannelAsk) => {
      seenAtSend.push(await store.pauses.findByTenantIdAndPauseId("acme", ask.pauseId));
      return ChannelOutcome.awaitReply();
    });
    for (const thread of ["a", "b", "c"]) await pauseRefund(app, mockLlm, `t-wh4-${thread}`);
    const ids = seenAtSend.map((r) => (r as { pauseId: string }).pauseId);
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) {
      expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(Buffer.from(id, "base64url")).toHaveLength(16);
    }
    expect(seenAtSend).toHaveLength(3);
    for (const record of seenAtSend) expect(record).toMatchObject({ isSent: false, status: "pending" });
  });

  test("[WH-06] the resumed pass runs as the thread's owner; answeredBy is recorded on the pause and in onExecutionResume", async ({
    app,
    openApp,
    mockLlm,
    store,
    mockOf,
  }) => {
    const onResume = mockOf(OfficeApplication).onExecutionResume;
    const { pauseId } = await pauseRefund(app, mockLlm);
    const other = await openApp();
    await other.resume(
      { pauseId, decision: { approved: true } },
      { tenantId: "acme", answeredBy: "manager-17" },
    );
    expect(other.get(Desk).events).toContain("refund ran as alice");
    expect((await store.pauses.findByTenantIdAndPauseId("acme", pauseId))?.answer?.responder).toBe(
      "manager-17",
    );
    expect(onResume).toHaveBeenCalledWith(
      expect.objectContaining({ answeredBy: "manager-17", pauseId: undefined }),
    );
  });
});

@Channel({ name: "desk-confirm-channel", description: "Asks whoever started the thread" })
class DeskConfirmChannel implements ChannelHandler {
  readonly sent = vi.fn<(ask: ChannelAsk) => void>();
  send(ask: ChannelAsk): Promise<ChannelOutcome> {
    this.sent(ask);
    return Promise.resolve(ChannelOutcome.awaitReply());
  }
}

@Tool({
  name: "confirm-expense-tool",
  description: "Books after the owner confirms",
  input: ExpenseDto,
  output: DoneDto,
  channel: DeskConfirmChannel,
  deps: [ExecutionContext],
})
class ConfirmExpenseTool {
  constructor(private readonly context: ExecutionContext) {}
  run(input: ExpenseDto) {
    return { status: `booked ${input.purpose} for ${this.context.ownerId}` };
  }
}

@Agent({
  name: "confirm-agent",
  description: "Books",
  prompt: "Book.",
  model: "scripted/x",
  tools: [ConfirmExpenseTool],
})
class ConfirmAgent {}
@WorkflowStart({ name: "confirm-workflow-start", description: "A request", input: WorkflowStartTextDto })
class ConfirmStart {}
@WorkflowFinish({ name: "confirm-workflow-finish", description: "Done", output: WorkflowFinishTextDto })
class ConfirmFinish {}
@Workflow({
  name: "confirm-workflow",
  version: "1.0.0",
  flow: [start(ConfirmStart).toAgent(ConfirmAgent).toFinish(ConfirmFinish)],
})
class ConfirmWorkflow {}
@Application({
  name: "confirm-application",
  workflows: [ConfirmWorkflow],
  providers: [ScriptedModelProvider],
})
class ConfirmApplication {}

onEachBackend(ConfirmApplication, (test) => {
  test("[WH-05] a concrete @Channel a tool names directly is answered by the thread's owner", async ({
    app,
    openApp,
    mockLlm,
  }) => {
    mockLlm(ConfirmAgent).thenReturn(
      callTool(ConfirmExpenseTool, { purpose: "taxi", amountCents: 900 }),
      replyWith("booked"),
    );
    const paused = await app.execute(
      ConfirmStart,
      { text: "book a taxi" },
      { threadId: "c1", ownerId: "bob" },
    );
    expect(paused.pending[0]).toMatchObject({
      answeredBy: PauseAnswerer.ThreadOwner,
      channel: "desk-confirm-channel",
      pauseId: expect.any(String),
    });
    const pauseId = paused.pending[0]?.pauseId as string;
    expect(app.get(DeskConfirmChannel).sent).toHaveBeenCalledTimes(1);
    const other = await openApp();
    await expect(
      other.resume({ pauseId, decision: { approved: true } }, { answeredBy: "someone" }),
    ).rejects.toBeInstanceOf(PauseAnswererError);
    const done = await other.resume({ pauseId, decision: { approved: true } }, { ownerId: "bob" });
    expect(done.output).toEqual({ text: "booked" });
  });
});
