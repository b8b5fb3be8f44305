import {
  AgentFailedError,
  ChannelOutcome,
  ExecutionStatus,
  PauseAnswerer,
  PauseKind,
  PauseResolution,
  PauseStatus,
  StoreUnavailableError,
  ToolCallApprovalAskDto,
} from "@agboss/core";
import { LEASE_TTL_MS } from "@agboss/core/internal";
import { expect, vi } from "vitest";
import { allOf, onEachBackend, postgresBackend, sqliteBackend } from "../../src/backends.js";
import {
  Desk,
  OfficeAgent,
  OfficeApplication,
  TestRefundApprovalChannel,
} from "../../src/fixtures/approval-app.js";
import { acme, pauseRefund, pauseTwo } from "../../src/office.js";

onEachBackend(OfficeApplication, (test) => {
  test("[PA-01] a tool naming a channel asks it before it runs; awaitReply pauses the call", async ({
    app,
    mockLlm,
  }) => {
    const { result } = await pauseRefund(app, mockLlm);
    const desk = app.get(Desk);
    expect(desk.asked).toHaveLength(1);
    expect(desk.refunds).toEqual([]);
    expect(result.status).toBe(ExecutionStatus.Paused);
    expect(result.output).toBeUndefined();
    expect(result.pending).toHaveLength(1);
    expect(result.pending[0]?.channel).toBe("refund-approval-channel");
  });

  test("[PA-04] pending lists one PendingPause per waiting pause, masked, with pauseId only for ThreadOwner pauses", async ({
    app,
    mockLlm,
  }) => {
    const { result, expensePauseId } = await pauseTwo(app, mockLlm);
    const byChannel = Object.fromEntries(result.pending.map((p) => [p.channel, p]));
    expect(byChannel["refund-approval-channel"]).toEqual({
      pauseId: undefined,
      answeredBy: PauseAnswerer.Channel,
      kind: PauseKind.Approval,
      agent: "office-agent",
      channel: "refund-approval-channel",
      itemIndex: undefined,
      childExecutionId: undefined,
      ask: {
        tool: "refund-card-tool",
        agent: "office-agent",
        callId: expect.any(String),
        arguments: { orderId: "ord_9", amountCents: 900, cardNumber: "***" },
      },
    });
    expect(byChannel["expense-approval-channel"]?.pauseId).toBe(expensePauseId);
    expect(byChannel["expense-approval-channel"]?.answeredBy).toBe(PauseAnswerer.ThreadOwner);
    for (const p of result.pending) expect(ToolCallApprovalAskDto.schema.safeParse(p.ask).success).toBe(true);
    // The channel itself got the real arguments.
    expect(app.get(Desk).asked.find((a) => a.channel === "refund")?.ask.value.arguments.cardNumber).toBe(
      "4242424242424242",
    );
  });

  test("[PA-06] status is Paused exactly while pending is non-empty; a finished execution has pending: []", async ({
    app,
    openApp,
    mockLlm,
  }) => {
    const { result, refundPauseId, expensePauseId } = await pauseTwo(app, mockLlm);
    expect([result.status, result.pending.length]).toEqual([ExecutionStatus.Paused, 2]);
    const second = await openApp();
    const partial = await second.resume(
      { pauseId: refundPauseId, decision: { approved: true } },
      { tenantId: "acme", answeredBy: "manager-17" },
    );
    expect([partial.status, partial.pending.length]).toEqual([ExecutionStatus.Paused, 1]);
    const done = await second.resume(
      { pauseId: expensePauseId, decision: { approved: true } },
      { tenantId: "acme", ownerId: "alice" },
    );
    expect([done.status, done.pending]).toEqual([ExecutionStatus.Completed, []]);
  });

  test("[PA-07] onExecutionPause fires each time the execution rests; a re-entered waiting pause fires and sends nothing", async ({
    app,
    openApp,
    mockLlm,
  }) => {
    const { refundPauseId, expensePauseId } = await pauseTwo(app, mockLlm);
    expect(app.get(Desk).events).toEqual(["pause:2"]);
    const second = await openApp();
    await second.resume(
      { pauseId: refundPauseId, decision: { approved: true } },
      { tenantId: "acme", answeredBy: "manager-17" },
    );
    // The expense task re-ran on this pass (LangGraph re-enters interrupted tasks) and found its pause.
    expect(second.get(Desk).asked).toEqual([]);
    const restEvents = () =>
      second.get(Desk).events.filter((e) => e.startsWith("pause") || e.startsWith("resume"));
    expect(restEvents()).toEqual(["resume:manager-17:hidden", "pause:1"]);
    await second.resume(
      { pauseId: expensePauseId, decision: { approved: true } },
      { tenantId: "acme", ownerId: "alice" },
    );
    // The last answer lets it finish: no further onExecutionPause.
    expect(restEvents()).toEqual(["resume:manager-17:hidden", "pause:1", "resume:alice:shown"]);
  });

  test("[PA-08] ChannelOutcome.decided answers at once: no pause, resolution Decided, status Taken", async ({
    app,
    mockLlm,
    mockOf,
    store,
  }) => {
    mockOf(TestRefundApprovalChannel).send.mockResolvedValue(ChannelOutcome.decided({ approved: true }));
    const { result } = await pauseRefund(app, mockLlm);
    expect(result.status).toBe(ExecutionStatus.Completed);
    expect(result.output).toEqual({ text: "Refund handled" });
    expect(app.get(Desk).refunds).toHaveLength(1);
    const [pause] = await store.pauses.list({ tenantId: "acme" });
    expect(pause?.status).toBe(PauseStatus.Taken);
    expect(pause?.resolution).toBe(PauseResolution.Decided);
  });

  test("[PA-09] a paused execute holds nothing: checkpoint written, pause recorded and sent, lease released, promise resolved", async ({
    app,
    mockLlm,
    store,
    clock,
  }) => {
    const { result, pauseId, threadKey } = await pauseRefund(app, mockLlm);
    expect(result.status).toBe(ExecutionStatus.Paused);
    const tuple = await store.checkpointer.getTuple({ configurable: { thread_id: threadKey } });
    expect(tuple?.checkpoint).toBeDefined();
    const pause = await store.pauses.findByTenantIdAndPauseId("acme", pauseId);
    expect(pause).toMatchObject({ status: PauseStatus.Pending, isSent: true });
    const lease = await store.leases.find(threadKey);
    expect(lease === undefined || lease.expiresAt <= clock.now()).toBe(true);
    const again = await store.leases.acquire({
      key: threadKey,
      holder: "another-instance",
      now: clock.now(),
      ttlMs: 30_000,
    });
    expect(again).toBeDefined();
    expect(allOf([app], Desk)[0]?.refunds).toEqual([]);
    expect(acme.tenantId).toBe("acme");
  });

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
});

// The SQL stores only: the memory store keeps a unit's writes made before a throw.
onEachBackend(
  OfficeApplication,
  (test) => {
    test("a decision a channel gives at once and its audit entry are one commit: when the entry cannot be written the pause stays pending, and the step run again on recovery takes it with its entry", async ({
      app,
      mockLlm,
      mockOf,
      store,
      clock,
    }) => {
      mockOf(TestRefundApprovalChannel).send.mockResolvedValue(ChannelOutcome.decided({ approved: true }));
      // Every try of the audit entry fails (a unit meeting a fault runs again).
      const audit = vi
        .spyOn(store.executions, "savePauseAnswer")
        .mockRejectedValue(new StoreUnavailableError("the database went away"));
      const failed = await pauseRefund(app, mockLlm, "t-decided-fault").catch((e: unknown) => e);
      audit.mockRestore();
      expect(failed).toBeInstanceOf(StoreUnavailableError);
      const [waiting] = await store.pauses.list({ tenantId: "acme", threadId: "t-decided-fault" });
      expect(waiting?.status).toBe(PauseStatus.Pending);
      await clock.advance(LEASE_TTL_MS + 1);
      await app.sweepOnce(24 * 3_600_000);
      await vi.waitFor(async () => {
        const record = await app.record(waiting?.rootExecutionId as string, { tenantId: "acme" });
        expect(record?.status).toBe(ExecutionStatus.Completed);
        expect(record?.pauses.map((p) => p.resolution)).toEqual([PauseResolution.Decided]);
      });
      expect(app.get(Desk).refunds).toHaveLength(1);
    });
  },
  {},
  [sqliteBackend, postgresBackend],
);
