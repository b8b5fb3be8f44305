import {
  AgentFailedError,
  type App,
  ChannelOf,
  ChannelOutcome,
  callTool,
  ExecutionAbortedError,
  ExecutionContext,
  ExecutionEndedError,
  ExecutionStatus,
  LogLevel,
  PauseKind,
  PauseResolution,
  PauseStatus,
} from "@agboss/core";
import { LEASE_TTL_MS } from "@agboss/core/internal";
import { RELEASED_LEASE_EXPIRY } from "@agboss/core/store";
import { expect, vi } from "vitest";
import { onEachBackend } from "../../src/backends.js";
import {
  ApprovedRefundTool,
  Desk,
  OfficeApplication,
  OfficeWorkflowStart,
  RefundApprovalChannel,
  TestExpenseApprovalChannel,
  TestRefundApprovalChannel,
} from "../../src/fixtures/approval-app.js";
import { acme, pauseExpense, pauseRefund, pauseTwo, scriptThread } from "../../src/office.js";

onEachBackend(OfficeApplication, (test) => {
  test("[WD-01] withdraw gets the pauseId, the value it was sent and the resolution; ChannelOf's own withdraw is a no-op", async ({
    app,
    mockLlm,
    mockOf,
    logger,
  }) => {
    const withdraw = mockOf(TestRefundApprovalChannel).withdraw;
    const { refundPauseId } = await pauseTwo(app, mockLlm, "t-wd1");
    const sent = app.get(Desk).asked.find((a) => a.pauseId === refundPauseId)?.ask;
    await app.cancel("t-wd1", { tenantId: "acme" });
    expect(withdraw).toHaveBeenCalledTimes(1);
    expect(withdraw.mock.calls[0]?.[0]).toEqual({
      pauseId: refundPauseId,
      kind: PauseKind.Approval,
      value: sent?.value,
      resolution: PauseResolution.Cancelled,
    });
    // The expense channel does not override withdraw: ChannelOf's no-op ran, nothing was logged.
    expect(Object.hasOwn(TestExpenseApprovalChannel.prototype, "withdraw")).toBe(false);
    await expect(
      new (class extends ChannelOf<unknown> {
        send() {
          return Promise.resolve(ChannelOutcome.awaitReply());
        }
      })().withdraw({
        pauseId: "p",
        kind: PauseKind.Approval,
        value: sent?.value as never,
        resolution: PauseResolution.Withdrawn,
      }),
    ).resolves.toBeUndefined();
    expect(logger.entries.filter((e) => e.event === "channel.withdraw-failed")).toEqual([]);
  });

  test("a channel's ref from awaitReply({ ref }) is kept with the pause and handed back to withdraw", async ({
    app,
    mockLlm,
    mockOf,
    store,
  }) => {
    const ref = { channel: "C024BE91L", ts: "1700000000.000100" };
    const send = mockOf(TestRefundApprovalChannel).send;
    send.mockResolvedValue(ChannelOutcome.awaitReply({ ref }));
    const withdraw = mockOf(TestRefundApprovalChannel).withdraw;
    await pauseRefund(app, mockLlm, "t-wd-ref");
    const pauseId = send.mock.calls[0]?.[0].pauseId as string;
    expect((await store.pauses.findByTenantIdAndPauseId("acme", pauseId))?.channelRef).toEqual(ref);
    await app.cancel("t-wd-ref", { tenantId: "acme" });
    expect(withdraw).toHaveBeenCalledTimes(1);
    expect(withdraw.mock.calls[0]?.[0]).toMatchObject({
      pauseId,
      ref,
      resolution: PauseResolution.Cancelled,
    });
  });

  test("a ref that is not JSON, or too large, fails the step with what to keep instead", async ({
    app,
    mockLlm,
    mockOf,
  }) => {
    const send = mockOf(TestRefundApprovalChannel).send;
    send.mockResolvedValueOnce(ChannelOutcome.awaitReply({ ref: "x".repeat(5000) }));
    const large = await pauseRefund(app, mockLlm, "t-wd-ref-large").catch((e: unknown) => e);
    expect(large).toBeInstanceOf(AgentFailedError);
    expect((large as Error).message).toContain("keep it under 4096");
    send.mockResolvedValueOnce(ChannelOutcome.awaitReply({ ref: { at: 1n } as never }));
    const notJson = await pauseRefund(app, mockLlm, "t-wd-ref-bigint").catch((e: unknown) => e);
    expect(notJson).toBeInstanceOf(AgentFailedError);
    expect((notJson as Error).message).toContain("is not JSON");
  });

  test("[WD-02] of two instances cancelling at once, exactly one closes the pause and tells the channel", async ({
    app,
    openApp,
    mockLlm,
    mockOf,
  }) => {
    const withdraw = mockOf(TestRefundApprovalChannel).withdraw;
    await pauseRefund(app, mockLlm, "t-wd2");
    const other = await openApp();
    await Promise.all([
      app.cancel("t-wd2", { tenantId: "acme" }),
      other.cancel("t-wd2", { tenantId: "acme" }),
    ]);
    expect(withdraw).toHaveBeenCalledTimes(1);
  });

  test("[WD-03] a pause closed while its send runs is told by its own step once send returned; never when decided at once or when send threw", async ({
    app,
    openApp,
    mockLlm,
    mockOf,
    store,
  }) => {
    const channel = mockOf(TestRefundApprovalChannel);
    const { sending, release } = holdNextSend(channel, () => ChannelOutcome.awaitReply());
    const running = pauseRefund(app, mockLlm, "t-wd3").catch((error: unknown) => error);
    await sending;
    const other = await openApp();
    await other.cancel("t-wd3", { tenantId: "acme" });
    expect(channel.withdraw).not.toHaveBeenCalled();
    release();
    // The cancel took the tree over: the pass that was sending stops once send returned, and says why.
    expect(await running).toBeInstanceOf(ExecutionEndedError);
    expect(channel.withdraw).toHaveBeenCalledTimes(1);
    expect(channel.withdraw.mock.calls[0]?.[0]).toMatchObject({ resolution: PauseResolution.Cancelled });

    channel.send.mockResolvedValueOnce(ChannelOutcome.decided({ approved: true }));
    await pauseRefund(app, mockLlm, "t-wd3-decided");
    await app.cancel("t-wd3-decided", { tenantId: "acme" });

    channel.send.mockRejectedValueOnce(new Error("chat service is down"));
    await expect(pauseRefund(app, mockLlm, "t-wd3-threw")).rejects.toBeInstanceOf(AgentFailedError);
    const threw = await store.pauses.list({ tenantId: "acme", threadId: "t-wd3-threw" });
    expect(threw[0]).toMatchObject({ status: PauseStatus.Cancelled, isSent: false });
    expect(channel.withdraw).toHaveBeenCalledTimes(1);
  });

  test("[WD-03] a pass aborted while its send runs lets the lease go: a cancel then leaves the telling to the step, once send returned", async ({
    app,
    openApp,
    mockLlm,
    mockOf,
    store,
  }) => {
    const channel = mockOf(TestRefundApprovalChannel);
    const order: string[] = [];
    const { sending, release } = holdNextSend(channel, () => {
      order.push("send returned");
      return ChannelOutcome.awaitReply({ ref: { message: "m-1" } });
    });
    channel.withdraw.mockImplementation(async (withdrawal) => {
      order.push(`withdraw ${JSON.stringify(withdrawal.ref ?? null)}`);
    });
    const controller = new AbortController();
    const text = "refund on t-wd3-aborted";
    scriptThread(mockLlm, text, callTool(ApprovedRefundTool, { orderId: "ord_1", amountCents: 1000 }));
    const running = app
      .execute(
        OfficeWorkflowStart,
        { text },
        { threadId: "t-wd3-aborted", ownerId: "alice", tenant: acme, signal: controller.signal },
      )
      .catch((error: unknown) => error);
    await sending;
    controller.abort();
    expect(await running).toBeInstanceOf(ExecutionAbortedError);
    // The aborted pass let its lease go while the send still ran: free, but not lapsed.
    expect((await store.leases.find("acme/t-wd3-aborted"))?.expiresAt).toBe(RELEASED_LEASE_EXPIRY);
    const other = await openApp();
    await other.cancel("t-wd3-aborted", { tenantId: "acme" });
    expect(order).toEqual([]);
    release();
    await vi.waitFor(() => expect(order).toEqual(["send returned", 'withdraw {"message":"m-1"}']));
  });

  test("[WD-03] an asker that does not come back from its send, cancelled while its lease looked live: the recovery sweep takes its question back once that lease would have run out, once, with no ref; a send that does come back later tells again", async ({
    app,
    openApp,
    mockLlm,
    mockOf,
    store,
    clock,
  }) => {
    const channel = mockOf(TestRefundApprovalChannel);
    const cancelledAt = clock.now();
    const { running, release, other } = await cancelledWhileSending(
      { app, openApp, mockLlm, channel },
      "t-wd3-gone",
      () => ChannelOutcome.awaitReply(),
    );
    const [closed] = await store.pauses.list({ tenantId: "acme", threadId: "t-wd3-gone" });
    expect(closed).toMatchObject({
      status: PauseStatus.Cancelled,
      isSent: false,
      withdrawalOwedAt: cancelledAt + LEASE_TTL_MS,
    });
    await other.sweepOnce(24 * 3_600_000);
    expect(channel.withdraw).not.toHaveBeenCalled();

    // The asker's lease would have run out: any instance's sweep takes the question back.
    await clock.advance(LEASE_TTL_MS + 1);
    await other.sweepOnce(24 * 3_600_000);
    await vi.waitFor(() => expect(channel.withdraw).toHaveBeenCalledTimes(1));
    expect(channel.withdraw.mock.calls[0]?.[0]).toMatchObject({ resolution: PauseResolution.Cancelled });
    expect(channel.withdraw.mock.calls[0]?.[0].ref).toBeUndefined();
    const [told] = await store.pauses.list({ tenantId: "acme", threadId: "t-wd3-gone" });
    expect(told).toMatchObject({ isSent: true });
    expect(told?.withdrawalOwedAt).toBeUndefined();

    // Should its send come back after all (a send slower than the lease, not a dead process), the sweep
    // may have told before the question was up: its step tells again, after its send returned.
    const order: string[] = [];
    channel.withdraw.mockImplementation(async () => {
      order.push("withdraw");
    });
    release();
    await running;
    // Its pass may have ended already (its watchdog saw the lease run out): the step goes on alone.
    await vi.waitFor(() => expect(order).toEqual(["withdraw"]));
    expect(channel.withdraw).toHaveBeenCalledTimes(2);
    await other.sweepOnce(24 * 3_600_000);
    expect(channel.withdraw).toHaveBeenCalledTimes(2);
  });

  test("[WD-03] the sweep takes back owed questions after it carried on the trees that owe work: a channel whose withdraw hangs holds up no recovery", async ({
    app,
    openApp,
    mockLlm,
    mockOf,
    store,
    clock,
  }) => {
    const channel = mockOf(TestRefundApprovalChannel);
    // More questions owed than there are sweeps about to run (each instance's timer, and the one below).
    const other = await openApp();
    const asking: { running: Promise<unknown>; release: () => void }[] = [];
    for (let i = 0; i < 4; i += 1) {
      const { sending, release } = holdNextSend(channel, () => ChannelOutcome.awaitReply());
      const running = pauseRefund(app, mockLlm, `t-wd3-outage-${i}`).catch((error: unknown) => error);
      await sending;
      await other.cancel(`t-wd3-outage-${i}`, { tenantId: "acme" });
      asking.push({ running, release });
    }
    // Another tree, answered by a resumer that died right after recording the answer.
    const { pauseId } = await pauseRefund(app, mockLlm, "t-wd3-behind");
    const answered = await store.pauses.resolve(
      "acme",
      pauseId,
      { decision: { approved: true }, responder: "m-1" },
      clock.now(),
    );
    // The chat service is down: each withdrawal's call waits (here until the service is back).
    let down = true;
    const waiting: (() => void)[] = [];
    channel.withdraw.mockImplementation(() =>
      down ? new Promise<void>((resolve) => waiting.push(resolve)) : Promise.resolve(),
    );
    const serviceBack = async () => {
      down = false;
      for (const resolve of waiting) resolve();
      for (const { release, running } of asking) {
        release();
        await running;
      }
    };
    await clock.advance(LEASE_TTL_MS + 1);
    const round = other.sweepOnce(24 * 3_600_000);
    try {
      await vi.waitFor(async () => {
        const record = await other.record(answered?.rootExecutionId as string, { tenantId: "acme" });
        expect(record?.status).toBe(ExecutionStatus.Completed);
      });
      await vi.waitFor(() => expect(waiting.length).toBeGreaterThan(0));
    } finally {
      await serviceBack();
    }
    await round;
  });

  test("[WD-03] a round whose recovery pages fail still takes back the questions owed", async ({
    app,
    openApp,
    mockLlm,
    mockOf,
    store,
    clock,
  }) => {
    const channel = mockOf(TestRefundApprovalChannel);
    const { running, release, other } = await cancelledWhileSending(
      { app, openApp, mockLlm, channel },
      "t-wd3-page-fails",
      () => ChannelOutcome.awaitReply(),
    );
    // A page of answered pauses that cannot be read (a row no code can decode, say), in every round.
    const pages = vi
      .spyOn(store.pauses, "listResolvedBefore")
      .mockRejectedValue(new Error("a row could not be read"));
    await clock.advance(LEASE_TTL_MS + 1);
    await other.sweepOnce(24 * 3_600_000);
    await vi.waitFor(() => expect(channel.withdraw).toHaveBeenCalledTimes(1));
    expect(pages).toHaveBeenCalled();
    pages.mockRestore();
    release();
    await running;
  });

  test("[WD-03] a call decided at once after such a cancel did not wait on its channel: it owes no withdrawal, and the sweep tells nothing", async ({
    app,
    openApp,
    mockLlm,
    mockOf,
    store,
    clock,
  }) => {
    const channel = mockOf(TestRefundApprovalChannel);
    const { running, release, other } = await cancelledWhileSending(
      { app, openApp, mockLlm, channel },
      "t-wd3-at-once",
      () => ChannelOutcome.decided({ approved: true }),
    );
    release();
    await running;
    const [closed] = await store.pauses.list({ tenantId: "acme", threadId: "t-wd3-at-once" });
    expect(closed).toMatchObject({ status: PauseStatus.Cancelled, isSent: false });
    expect(closed?.withdrawalOwedAt).toBeUndefined();

    await clock.advance(LEASE_TTL_MS + 1);
    await other.sweepOnce(24 * 3_600_000);
    expect(channel.withdraw).not.toHaveBeenCalled();
  });

  test("[WD-03] an asker back from its send after such a cancel claims the telling: its step tells once, with its ref, and the sweep then owes nothing", async ({
    app,
    openApp,
    mockLlm,
    mockOf,
    store,
    clock,
  }) => {
    const channel = mockOf(TestRefundApprovalChannel);
    const { running, release, other } = await cancelledWhileSending(
      { app, openApp, mockLlm, channel },
      "t-wd3-back",
      () => ChannelOutcome.awaitReply({ ref: { message: "m-2" } }),
    );
    release();
    expect(await running).toBeInstanceOf(ExecutionEndedError);
    expect(channel.withdraw).toHaveBeenCalledTimes(1);
    expect(channel.withdraw.mock.calls[0]?.[0]).toMatchObject({ ref: { message: "m-2" } });
    const [claimed] = await store.pauses.list({ tenantId: "acme", threadId: "t-wd3-back" });
    expect(claimed).toMatchObject({ isSent: true, channelRef: { message: "m-2" } });
    expect(claimed?.withdrawalOwedAt).toBeUndefined();

    await clock.advance(LEASE_TTL_MS + 1);
    await other.sweepOnce(24 * 3_600_000);
    expect(channel.withdraw).toHaveBeenCalledTimes(1);
  });

  test("[WD-03] a send that throws after such a cancel forgoes what was owed: its channel is never told, by the sweep either", async ({
    app,
    openApp,
    mockLlm,
    mockOf,
    store,
    clock,
  }) => {
    const channel = mockOf(TestRefundApprovalChannel);
    const { running, release, other } = await cancelledWhileSending(
      { app, openApp, mockLlm, channel },
      "t-wd3-failed",
      () => {
        throw new Error("chat service is down");
      },
    );
    release();
    await running;
    const [forgone] = await store.pauses.list({ tenantId: "acme", threadId: "t-wd3-failed" });
    expect(forgone).toMatchObject({ status: PauseStatus.Cancelled, isSent: false });
    expect(forgone?.withdrawalOwedAt).toBeUndefined();

    await clock.advance(LEASE_TTL_MS + 1);
    await other.sweepOnce(24 * 3_600_000);
    expect(channel.withdraw).not.toHaveBeenCalled();
  });

  test("[WD-04] withdraw runs in the pause's execution frame, under its tool's timeout on the Clock", async ({
    app,
    mockLlm,
    mockOf,
    clock,
    logger,
  }) => {
    const context = app.get(ExecutionContext);
    let seen:
      | { tenantId: string; ownerId: string; callId: string | undefined; signal: AbortSignal }
      | undefined;
    mockOf(TestRefundApprovalChannel).withdraw.mockImplementation(
      () =>
        new Promise<void>(() => {
          seen = {
            tenantId: context.tenant.tenantId,
            ownerId: context.ownerId,
            callId: context.step?.callId,
            signal: context.signal,
          };
        }),
    );
    const { result } = await pauseRefund(app, mockLlm, "t-wd4");
    const cancelling = app.cancel("t-wd4", { tenantId: "acme" });
    await vi.waitFor(() => expect(seen).toBeDefined());
    expect(seen).toMatchObject({ tenantId: "acme", ownerId: "alice", callId: result.pending[0]?.ask.callId });
    expect(seen?.signal.aborted).toBe(false);
    await clock.advance(29_999);
    expect(seen?.signal.aborted).toBe(false);
    await clock.advance(1);
    await cancelling;
    expect(seen?.signal.aborted).toBe(true);
    expect(logger.entries.filter((e) => e.event === "channel.withdraw-failed")).toHaveLength(1);
  });

  test("[WD-05] a withdraw that throws is one warning, channel.withdraw-failed, and nothing else changes", async ({
    app,
    mockLlm,
    mockOf,
    logger,
    store,
  }) => {
    mockOf(TestRefundApprovalChannel).withdraw.mockRejectedValue(new Error("message already deleted"));
    const { pauseId, result } = await pauseRefund(app, mockLlm, "t-wd5");
    await app.cancel("t-wd5", { tenantId: "acme" });
    const warnings = logger.entries.filter((e) => e.event === "channel.withdraw-failed");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      level: LogLevel.Warn,
      fields: { executionId: result.executionId, tenantId: "acme" },
    });
    expect(warnings[0]?.message).toContain("message already deleted");
    expect(await store.pauses.findByTenantIdAndPauseId("acme", pauseId)).toMatchObject({
      status: PauseStatus.Cancelled,
    });
    expect((await app.record(result.executionId, { tenantId: "acme" }))?.status).toBe("cancelled");
  });

  test("[TK-03] mockOf(Implementation).send scripts a role's implementation; the role resolves to the mock; withdraw records calls", async ({
    app,
    mockLlm,
    mockOf,
  }) => {
    const mocked = mockOf(TestRefundApprovalChannel);
    mocked.send.mockResolvedValue(ChannelOutcome.decided({ approved: true }));
    expect(app.get(RefundApprovalChannel).send).toBe(mocked.send);
    const { result } = await pauseRefund(app, mockLlm, "t-tk3");
    expect(result.status).toBe("completed");
    expect(mocked.send).toHaveBeenCalledTimes(1);
    expect(app.get(Desk).refunds).toHaveLength(1);
    mocked.send.mockResolvedValue(ChannelOutcome.awaitReply());
    await pauseExpense(app, mockLlm, "t-tk3-expense");
    await pauseRefund(app, mockLlm, "t-tk3-wait");
    await app.cancel("t-tk3-wait", { tenantId: "acme" });
    expect(mocked.withdraw).toHaveBeenCalledTimes(1);
  });
});

/**
 * Holds the channel's next `send` until `release()`, then returns `outcome()`; `sending` settles once
 * that `send` was called.
 */
function holdNextSend(
  channel: { send: { mockImplementationOnce(send: () => Promise<ChannelOutcome>): unknown } },
  outcome: () => ChannelOutcome,
): { sending: Promise<void>; release: () => void } {
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let started: () => void = () => undefined;
  const sending = new Promise<void>((resolve) => {
    started = resolve;
  });
  channel.send.mockImplementationOnce(async () => {
    started();
    await gate;
    return outcome();
  });
  return { sending, release: () => release() };
}

/**
 * Starts a refund on `threadId` whose channel's `send` is held (then returns `outcome()`), and once it is
 * in its `send`, cancels the thread from a second instance, which takes the live lease over.
 */
async function cancelledWhileSending(
  fixture: {
    app: App;
    openApp: () => Promise<App>;
    mockLlm: Parameters<typeof pauseRefund>[1];
    channel: Parameters<typeof holdNextSend>[0];
  },
  threadId: string,
  outcome: () => ChannelOutcome,
): Promise<{ running: Promise<unknown>; release: () => void; other: App }> {
  const { sending, release } = holdNextSend(fixture.channel, outcome);
  const running = pauseRefund(fixture.app, fixture.mockLlm, threadId).catch((error: unknown) => error);
  await sending;
  const other = await fixture.openApp();
  await other.cancel(threadId, { tenantId: "acme" });
  return { running, release, other };
}
