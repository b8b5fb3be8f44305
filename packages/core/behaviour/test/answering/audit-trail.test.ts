import {
  AgentFailedError,
  ChannelOutcome,
  callTool,
  ExecutionStatus,
  PauseAnswerer,
  PauseKind,
  PauseResolution,
  replyWith,
} from "@agboss/core";
import { expect, vi } from "vitest";
import { onEachBackend } from "../../src/backends.js";
import {
  ApprovedRefundTool,
  Desk,
  OfficeApplication,
  OfficeWorkflowStart,
  TestExpenseApprovalChannel,
} from "../../src/fixtures/approval-app.js";
import {
  FinanceAgent,
  LegalAgent,
  OpsAgent,
  ReviewApplication,
  ReviewStart,
} from "../../src/fixtures/parallel-app.js";
import { acme, pauseExpense, pauseRefund, pauseTwo, scriptThread } from "../../src/office.js";

const manager = { tenantId: "acme", answeredBy: "manager-17" } as const;

onEachBackend(OfficeApplication, (test) => {
  test("[AU-01] { record: true } returns record.pauses: every resolved pause in the order asked, masked", async ({
    app,
    openApp,
    mockLlm,
    clock,
  }) => {
    const { refundPauseId, expensePauseId, result } = await pauseTwo(app, mockLlm);
    const paused = await app.record(result.executionId, { tenantId: "acme" });
    expect(paused?.pauses).toEqual([]);
    const other = await openApp();
    await clock.advance(5_000);
    // Answer the later-asked pause first: the trail still lists them in the order asked.
    await other.resume(
      { pauseId: expensePauseId, decision: { approved: true } },
      { tenantId: "acme", ownerId: "alice", record: true },
    );
    await clock.advance(5_000);
    const done = await other.resume(
      {
        pauseId: refundPauseId,
        decision: {
          approved: true,
          overrideArguments: { orderId: "ord_9", amountCents: 800, cardNumber: "5555444433332222" },
        },
      },
      { ...manager, record: true },
    );
    expect(done.status).toBe(ExecutionStatus.Completed);
    const pauses = done.record?.pauses ?? [];
    expect(pauses.map((p) => p.role)).toEqual(["refund-approval-channel", "expense-approval-channel"]);
    expect(pauses[0]).toEqual({
      pauseId: undefined,
      executionId: result.executionId,
      step: expect.objectContaining({
        agent: { kind: "agent", name: "office-agent" },
        nodeId: "agent/office-agent",
        visit: 1,
        toolLoopIteration: 1,
        validationAttempts: 0,
        toolCall: { callId: expect.any(String), tool: "refund-card-tool", index: 0 },
      }),
      role: "refund-approval-channel",
      kind: PauseKind.Approval,
      answeredBy: PauseAnswerer.Channel,
      responder: "manager-17",
      resolution: PauseResolution.Replied,
      askedAt: "2026-01-01T00:00:00.000Z",
      resolvedAt: "2026-01-01T00:00:10.000Z",
      decision: {
        approved: true,
        overrideArguments: { orderId: "ord_9", amountCents: 800, cardNumber: "***" },
      },
    });
    expect(pauses[1]).toMatchObject({
      pauseId: expensePauseId,
      answeredBy: PauseAnswerer.ThreadOwner,
      responder: "alice",
      resolvedAt: "2026-01-01T00:00:05.000Z",
    });
    expect(JSON.stringify(done.record)).not.toContain("5555444433332222");
  });

  test("[AU-01] pauses asked in one model turn are listed in the turn's call order, whatever the provider's call ids", async ({
    app,
    mockLlm,
  }) => {
    const text = "refund and book, ids against the order";
    // Ids that sort the other way round: the trail must not be ordered by them.
    scriptThread(
      mockLlm,
      text,
      {
        content: "",
        toolCalls: [
          { id: "zz-refund", name: "refund-card-tool", arguments: { orderId: "ord_4", amountCents: 400 } },
          { id: "aa-expense", name: "book-expense-tool", arguments: { purpose: "train", amountCents: 900 } },
        ],
      },
      replyWith("Both done"),
    );
    const result = await app.execute(
      OfficeWorkflowStart,
      { text },
      { threadId: "t-ids", ownerId: "alice", tenant: acme },
    );
    expect(result.status).toBe(ExecutionStatus.Paused);
    const refund = app.get(Desk).asked.find((a) => a.channel === "refund")?.pauseId as string;
    const expense = result.pending.find((p) => p.pauseId !== undefined)?.pauseId as string;
    await app.resume(
      { pauseId: expense, decision: { approved: true } },
      { tenantId: "acme", ownerId: "alice" },
    );
    await app.resume({ pauseId: refund, decision: { approved: true } }, manager);
    const record = await app.record(result.executionId, { tenantId: "acme" });
    expect(record?.pauses.map((p) => p.step.toolCall?.callId)).toEqual(["zz-refund", "aa-expense"]);
  });

  test("[AU-02] each entry is written once by savePauseAnswer and read back from the execution records, so retention removes none", async ({
    app,
    openApp,
    mockLlm,
    store,
    clock,
  }) => {
    const save = vi.spyOn(store.executions, "savePauseAnswer");
    const { refundPauseId, expensePauseId, result } = await pauseTwo(app, mockLlm);
    const other = await openApp();
    await other.resume({ pauseId: refundPauseId, decision: { approved: true } }, manager);
    await other.resume(
      { pauseId: expensePauseId, decision: { approved: false, reason: "not a business trip" } },
      { tenantId: "acme", ownerId: "alice" },
    );
    expect(save).toHaveBeenCalledTimes(2);
    expect(save.mock.calls.map((c) => c[1])).toEqual([result.executionId, result.executionId]);
    clock.set(clock.now() + 25 * 3_600_000);
    await clock.advance(30_000);
    expect(await store.pauses.list({ tenantId: "acme" })).toEqual([]);
    const record = await other.record(result.executionId, { tenantId: "acme" });
    expect(
      record?.pauses.map((p) => [p.role, p.resolution, (p.decision as { approved: boolean }).approved]),
    ).toEqual([
      ["refund-approval-channel", "replied", true],
      ["expense-approval-channel", "replied", false],
    ]);
    const stored = await store.executions.findPauseAnswersByTenantIdAndRootExecutionId(
      "acme",
      result.executionId,
    );
    expect(stored).toHaveLength(2);
  });

  test("[AU-01] a cancelled pause has its entry: resolution Cancelled, asked and closed on the Clock, no answer", async ({
    app,
    clock,
    mockLlm,
  }) => {
    const { result } = await pauseRefund(app, mockLlm, "t-au-cancel");
    await clock.advance(7_000);
    await app.cancel("t-au-cancel", { tenantId: "acme" });
    const record = await app.record(result.executionId, { tenantId: "acme" });
    expect(record?.status).toBe(ExecutionStatus.Cancelled);
    expect(record?.pauses).toEqual([
      {
        pauseId: undefined,
        executionId: result.executionId,
        step: expect.objectContaining({
          agent: { kind: "agent", name: "office-agent" },
          nodeId: "agent/office-agent",
          toolCall: { callId: expect.any(String), tool: "refund-card-tool", index: 0 },
        }),
        role: "refund-approval-channel",
        kind: PauseKind.Approval,
        answeredBy: PauseAnswerer.Channel,
        resolution: PauseResolution.Cancelled,
        askedAt: "2026-01-01T00:00:00.000Z",
        resolvedAt: "2026-01-01T00:00:07.000Z",
      },
    ]);
  });

  test("[AU-01] a pause its channel decided at once has its entry: resolution Decided, with the channel's decision", async ({
    app,
    mockLlm,
    mockOf,
  }) => {
    mockOf(TestExpenseApprovalChannel).send.mockResolvedValueOnce(ChannelOutcome.decided({ approved: true }));
    const { result } = await pauseExpense(app, mockLlm, "t-au-decided");
    expect(result.status).toBe(ExecutionStatus.Completed);
    expect(result.pending).toEqual([]);
    const record = await app.record(result.executionId, { tenantId: "acme" });
    expect(record?.pauses).toEqual([
      {
        pauseId: expect.any(String),
        executionId: result.executionId,
        step: expect.objectContaining({
          agent: { kind: "agent", name: "office-agent" },
          nodeId: "agent/office-agent",
          toolCall: { callId: expect.any(String), tool: "book-expense-tool", index: 0 },
        }),
        role: "expense-approval-channel",
        kind: PauseKind.Approval,
        answeredBy: PauseAnswerer.ThreadOwner,
        resolution: PauseResolution.Decided,
        askedAt: "2026-01-01T00:00:00.000Z",
        resolvedAt: "2026-01-01T00:00:00.000Z",
        decision: { approved: true },
      },
    ]);
  });
});

onEachBackend(ReviewApplication, (test) => {
  test("[AU-01] a pause a FailFast launch withdrew has its entry: resolution Withdrawn, and the launch that withdrew it", async ({
    app,
    mockLlm,
    store,
  }) => {
    mockLlm(LegalAgent).thenReturn(callTool(ApprovedRefundTool, { orderId: "ord_1", amountCents: 100 }));
    mockLlm(FinanceAgent).thenReturn(() => Promise.reject(new Error("ledger offline")));
    mockLlm(OpsAgent).thenReturn(replyWith("ops ok"));
    const error = await app
      .execute(
        ReviewStart,
        { text: "case 9" },
        { ownerId: "alice", tenant: acme, threadId: "t-au-withdrawn" },
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentFailedError);
    const [pause] = await store.pauses.list({ tenantId: "acme", threadId: "t-au-withdrawn" });
    const rootExecutionId = pause?.rootExecutionId as string;
    const record = await app.record(rootExecutionId, { tenantId: "acme" });
    expect(record?.pauses).toEqual([
      {
        pauseId: undefined,
        executionId: rootExecutionId,
        step: expect.objectContaining({
          agent: { kind: "agent", name: "legal-agent" },
          nodeId: "launch/1/0:agent/legal-agent",
          copy: 0,
          toolCall: { callId: expect.any(String), tool: "refund-card-tool", index: 0 },
        }),
        role: "refund-approval-channel",
        kind: PauseKind.Approval,
        answeredBy: PauseAnswerer.Channel,
        resolution: PauseResolution.Withdrawn,
        askedAt: "2026-01-01T00:00:00.000Z",
        resolvedAt: "2026-01-01T00:00:00.000Z",
        withdrawnBy: { executionId: rootExecutionId, launchId: "launch/1" },
      },
    ]);
  });
});
