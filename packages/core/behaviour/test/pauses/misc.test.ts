import {
  Agent,
  AgentFailedError,
  Application,
  AssemblyError,
  ChannelOf,
  ChannelRole,
  type ChannelRoleOptions,
  callTool,
  createApp,
  memoryStore,
  PauseStatus,
  ReplyInterpreterMissingError,
  replyWith,
  start,
  Tool,
  Workflow,
  WorkflowFinish,
  WorkflowFinishTextDto,
  WorkflowStart,
  WorkflowStartTextDto,
} from "@agboss/core";
import { expect, test as plainTest } from "vitest";
import { frozen, onEachBackend } from "../../src/backends.js";
import {
  BookExpenseTool,
  Desk,
  DoneDto,
  ExpenseDto,
  OfficeAgent,
  OfficeApplication,
  OfficeWorkflowStart,
  TestRefundApprovalChannel,
} from "../../src/fixtures/approval-app.js";
import { ScriptedModelProvider } from "../../src/fixtures/refund-app.js";
import { acme, pauseExpense, pauseRefund, pauseTwo, scriptThread } from "../../src/office.js";
import { handleApproval, handleRequest } from "../../src/webhooks.js";

const manager = { tenantId: "acme", answeredBy: "manager-17" } as const;

onEachBackend(OfficeApplication, (test) => {
  test("[FW-03] a channel whose send throws fails the agent's step with AgentFailedError, never a tool error the model reads", async ({
    app,
    mockLlm,
    mockOf,
  }) => {
    const cause = new Error("chat service unreachable");
    mockOf(TestRefundApprovalChannel).send.mockRejectedValue(cause);
    const error = (await pauseRefund(app, mockLlm, "t-fw3").catch((e: unknown) => e)) as AgentFailedError;
    expect(error).toBeInstanceOf(AgentFailedError);
    expect(error.cause).toBe(cause);
    expect(error.message).toContain(
      'channel "refund-approval-channel" failed to ask about refund-card-tool: chat service unreachable',
    );
    // The model was asked once (the call) and never read a tool error.
    expect(mockLlm(OfficeAgent).calls).toHaveLength(1);
    expect(app.get(Desk).refunds).toEqual([]);
  });

  test("[RP-11] a reply for a role without replyInterpreter is ReplyInterpreterMissingError and the pause is untouched", async ({
    app,
    mockLlm,
    store,
  }) => {
    const { pauseId, threadKey } = await pauseRefund(app, mockLlm, "t-rp11");
    const before = await frozen(store, "acme", pauseId, threadKey);
    const error = await app.resume({ pauseId, reply: "ok, go ahead" }, manager).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplyInterpreterMissingError);
    expect((error as ReplyInterpreterMissingError).code).toBe("pause.no-reply-interpreter");
    expect(await frozen(store, "acme", pauseId, threadKey)).toBe(before);
  });

  test("the inbox lists pauses by tenant, status, role and thread, never revealing a Channel pause's id", async ({
    app,
    openApp,
    mockLlm,
  }) => {
    const { refundPauseId, expensePauseId } = await pauseTwo(app, mockLlm, "t-inbox-1");
    await pauseExpense(app, mockLlm, "t-inbox-2");
    const other = await openApp();
    await other.resume(
      { pauseId: expensePauseId, decision: { approved: true } },
      { tenantId: "acme", ownerId: "alice" },
    );
    const pending = await other.pauses.list({ tenantId: "acme", status: PauseStatus.Pending });
    expect(pending.map((p) => [p.threadId, p.channel]).sort()).toEqual([
      ["t-inbox-1", "refund-approval-channel"],
      ["t-inbox-2", "expense-approval-channel"],
    ]);
    expect(pending.find((p) => p.channel === "refund-approval-channel")?.pauseId).toBeUndefined();
    expect(pending.find((p) => p.channel === "expense-approval-channel")?.pauseId).toEqual(
      expect.any(String),
    );
    expect(JSON.stringify(await other.pauses.list({ tenantId: "acme" }))).not.toContain(refundPauseId);
    const byRole = await other.pauses.list({
      tenantId: "acme",
      role: "expense-approval-channel",
      threadId: "t-inbox-1",
    });
    expect(byRole.map((p) => [p.status, p.responder])).toEqual([["taken", "alice"]]);
    expect(await other.pauses.list({ tenantId: "globex" })).toEqual([]);
    expect(byRole[0]?.ask).toMatchObject({ tool: "book-expense-tool", arguments: { purpose: "taxi" } });
  });

  test("the inbox lists one person's questions across their threads (ownerId), oldest first", async ({
    app,
    mockLlm,
    clock,
  }) => {
    await pauseExpense(app, mockLlm, "t-owner-1");
    await clock.advance(1_000);
    await pauseExpense(app, mockLlm, "t-owner-2");
    scriptThread(
      mockLlm,
      "bob's lunch",
      callTool(BookExpenseTool, { purpose: "lunch", amountCents: 900 }),
      replyWith("Expense handled"),
    );
    await app.execute(
      OfficeWorkflowStart,
      { text: "bob's lunch" },
      { threadId: "t-owner-bob", ownerId: "bob", tenant: acme },
    );
    const alice = await app.pauses.list({ tenantId: "acme", ownerId: "alice", status: PauseStatus.Pending });
    expect(alice.map((p) => p.threadId)).toEqual(["t-owner-1", "t-owner-2"]);
    const bob = await app.pauses.list({ tenantId: "acme", ownerId: "bob" });
    expect(bob.map((p) => [p.threadId, p.kind])).toEqual([["t-owner-bob", "approval"]]);
    expect(await app.pauses.list({ tenantId: "globex", ownerId: "alice" })).toEqual([]);
  });

  test("[HW-04] the webhook pattern: 202 when paused, 404 for an unknown pause, an idempotent 200 for a duplicate saying who answered", async ({
    app,
    openApp,
    mockLlm,
  }) => {
    const text = "refund on req-1";
    mockLlm(OfficeAgent)
      .when((r) => r.messages.find((m) => m.role === "user")?.content === text)
      .thenReturn(
        callTool((await import("../../src/fixtures/approval-app.js")).ApprovedRefundTool, {
          orderId: "ord_5",
          amountCents: 500,
        }),
        replyWith("Refund handled"),
      );
    const started = await handleRequest(app, {
      requestId: "req-1",
      text,
      tenantId: "acme",
      userId: "customer-1",
    });
    expect(started).toEqual({
      httpStatus: 202,
      body: { state: "awaiting_approval", threadId: "request:req-1" },
    });
    const pauseId = app.get(Desk).asked.at(-1)?.pauseId as string;
    const other = await openApp();
    expect(
      await handleApproval(other, {
        pauseId: "nope",
        tenantId: "acme",
        managerId: "manager-17",
        approved: true,
      }),
    ).toEqual({
      httpStatus: 404,
      body: { status: "unknown_or_expired_pause" },
    });
    expect(
      await handleApproval(other, { pauseId, tenantId: "acme", managerId: "manager-17", approved: true }),
    ).toEqual({ httpStatus: 200, body: { status: "completed" } });
    const duplicate = await handleApproval(app, {
      pauseId,
      tenantId: "acme",
      managerId: "manager-17",
      approved: true,
    });
    expect(duplicate).toEqual({
      httpStatus: 200,
      body: { status: "already_resolved", resolution: "replied", by: "manager-17", at: expect.any(String) },
    });
    expect(
      await handleApproval(app, { pauseId, tenantId: "acme", managerId: "manager-17", reply: "lgtm" }),
    ).toMatchObject({ httpStatus: 200, body: { status: "already_resolved" } });
  });
});

plainTest(
  "[AS-06] @ChannelRole({ answeredBy }) is required: leaving it out does not compile and fails assembly",
  async () => {
    // @ts-expect-error answeredBy is required on a channel role
    const options: ChannelRoleOptions = {
      name: "loose-approval-channel",
      description: "Forgot who answers",
      approves: ExpenseDto,
    };
    @ChannelRole(options)
    abstract class LooseApprovalChannel extends ChannelOf<LooseApprovalChannel> {}
    @Tool({
      name: "loose-expense-tool",
      description: "Books",
      input: ExpenseDto,
      output: DoneDto,
      channel: LooseApprovalChannel,
    })
    class LooseExpenseTool {
      run() {
        return { status: "ok" };
      }
    }
    @Agent({
      name: "loose-agent",
      description: "Books",
      prompt: "Book.",
      model: "scripted/x",
      tools: [LooseExpenseTool],
    })
    class LooseAgent {}
    @WorkflowStart({ name: "loose-workflow-start", description: "A request", input: WorkflowStartTextDto })
    class LooseStart {}
    @WorkflowFinish({ name: "loose-workflow-finish", description: "Done", output: WorkflowFinishTextDto })
    class LooseFinish {}
    @Workflow({
      name: "loose-workflow",
      version: "1.0.0",
      flow: [start(LooseStart).toAgent(LooseAgent).toFinish(LooseFinish)],
    })
    class LooseWorkflow {}
    @Application({
      name: "loose-application",
      workflows: [LooseWorkflow],
      providers: [ScriptedModelProvider],
    })
    class LooseApplication {}
    const error = await createApp(LooseApplication, { store: memoryStore() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AssemblyError);
    const rules = (error as AssemblyError).violations.map((v) => v.rule);
    expect(rules).toContain("channel.no-answerer");
    expect(rules).toContain("container.missing-provider");
    expect(
      (error as AssemblyError).violations.find((v) => v.rule === "channel.no-answerer")?.message,
    ).toContain("There is no default");
  },
);
