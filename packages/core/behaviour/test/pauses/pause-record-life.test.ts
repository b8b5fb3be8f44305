import {
  Application,
  ChannelOutcome,
  ExecutionStatus,
  hours,
  NotPausedError,
  PauseResolution,
  PauseStatus,
  type Store,
  UnknownPauseError,
} from "@agboss/core";
import type { TestClock } from "@agboss/testing";
import { expect, vi } from "vitest";
import { frozen, onEachBackendAndPostgres } from "../../src/backends.js";
import {
  Desk,
  OfficeApplication,
  OfficeWorkflow,
  TestExpenseApprovalChannel,
  TestRefundApprovalChannel,
} from "../../src/fixtures/approval-app.js";
import { ScriptedModelProvider } from "../../src/fixtures/refund-app.js";
import { pauseExpense, pauseRefund, pauseTwo } from "../../src/office.js";

const manager = { tenantId: "acme", answeredBy: "manager-17" } as const;

onEachBackendAndPostgres(OfficeApplication, (test) => {
  test("[LF-01] a pause is keyed by its step's idempotency key: a re-entered step finds the same pauseId and never sends twice", async ({
    app,
    openApp,
    mockLlm,
    store,
  }) => {
    const { refundPauseId, expensePauseId } = await pauseTwo(app, mockLlm);
    const expense = await store.pauses.findByTenantIdAndPauseId("acme", expensePauseId);
    expect(expense?.idempotencyKey).toMatch(/^[0-9a-f-]{36}:agent\/office-agent:1:call_/);
    expect(app.get(Desk).asked.find((a) => a.channel === "expense")?.step).toMatchObject({
      idempotencyKey: expense?.idempotencyKey,
    });
    const other = await openApp();
    await other.resume({ pauseId: refundPauseId, decision: { approved: true } }, manager);
    // The expense step ran again in that pass and found its record.
    const again = await store.pauses.findByTenantIdAndIdempotencyKey(
      "acme",
      expense?.idempotencyKey as string,
    );
    expect(again?.pauseId).toBe(expensePauseId);
    expect(other.get(Desk).asked).toEqual([]);
    expect(await store.pauses.list({ tenantId: "acme" })).toHaveLength(2);
  });

  test("[LF-02] Pending (isSent) → Resolved (phase 1) → Taken (its step took it); decided at once → Taken; withdrawn → Cancelled", async ({
    app,
    openApp,
    mockLlm,
    store,
    clock,
    mockOf,
  }) => {
    const { pauseId, threadKey } = await pauseRefund(app, mockLlm, "t-lf2");
    expect(await store.pauses.findByTenantIdAndPauseId("acme", pauseId)).toMatchObject({
      status: PauseStatus.Pending,
      isSent: true,
    });
    // Another holder moves the tree: phase 1 lands at once, phase 2 waits for the lease.
    const blocker = await store.leases.acquire({
      key: threadKey,
      holder: "other-instance",
      now: clock.now(),
      ttlMs: 30_000,
    });
    const other = await openApp();
    const resuming = other.resume({ pauseId, decision: { approved: true } }, manager);
    await vi.waitFor(async () =>
      expect((await store.pauses.findByTenantIdAndPauseId("acme", pauseId))?.status).toBe(
        PauseStatus.Resolved,
      ),
    );
    await store.leases.release(blocker as NonNullable<typeof blocker>);
    expect((await resuming).status).toBe(ExecutionStatus.Completed);
    expect(await store.pauses.findByTenantIdAndPauseId("acme", pauseId)).toMatchObject({
      status: PauseStatus.Taken,
      resolution: PauseResolution.Replied,
    });

    mockOf(TestExpenseApprovalChannel).send.mockResolvedValueOnce(ChannelOutcome.decided({ approved: true }));
    await pauseExpense(app, mockLlm, "t-lf2-decided");
    const decided = (await store.pauses.list({ tenantId: "acme", threadId: "t-lf2-decided" }))[0];
    expect(decided).toMatchObject({ status: PauseStatus.Taken, resolution: PauseResolution.Decided });

    const cancelled = await pauseRefund(app, mockLlm, "t-lf2-cancel");
    await app.cancel("t-lf2-cancel", { tenantId: "acme" });
    expect(await store.pauses.findByTenantIdAndPauseId("acme", cancelled.pauseId)).toMatchObject({
      status: PauseStatus.Cancelled,
    });
    expect(cancelled.result.status).toBe(ExecutionStatus.Paused);
  });

  test("[LF-03] an answer to a pause that is not Pending is NotPausedError (run.not-paused), saying how, when and by whom", async ({
    app,
    mockLlm,
    store,
    clock,
  }) => {
    const { pauseId, threadKey } = await pauseRefund(app, mockLlm, "t-lf3");
    await clock.advance(60_000);
    await app.resume({ pauseId, decision: { approved: true } }, manager);
    const snapshot = await frozen(store, "acme", pauseId, threadKey);
    const error = (await app
      .resume({ pauseId, decision: { approved: true } }, manager)
      .catch((e: unknown) => e)) as NotPausedError;
    expect(error).toBeInstanceOf(NotPausedError);
    expect(error.code).toBe("run.not-paused");
    expect(error).toMatchObject({
      status: PauseStatus.Taken,
      resolution: PauseResolution.Replied,
      responder: "manager-17",
      resolvedAt: "2026-01-01T00:01:00.000Z",
    });
    expect(error.message).toContain("it was replied by manager-17 at 2026-01-01T00:01:00.000Z");
    expect(await frozen(store, "acme", pauseId, threadKey)).toBe(snapshot);
    const withdrawn = await pauseRefund(app, mockLlm, "t-lf3-cancel");
    await app.cancel("t-lf3-cancel", { tenantId: "acme" });
    const late = (await app
      .resume({ pauseId: withdrawn.pauseId, decision: { approved: true } }, manager)
      .catch((e: unknown) => e)) as NotPausedError;
    expect(late).toMatchObject({
      status: PauseStatus.Cancelled,
      resolution: PauseResolution.Cancelled,
      responder: undefined,
    });
  });

  test("[LF-04] each record carries its resolution, its answer and askedAt / resolvedAt on the application's Clock", async ({
    app,
    mockLlm,
    store,
    clock,
  }) => {
    const { pauseId } = await pauseRefund(app, mockLlm, "t-lf4");
    const asked = clock.now();
    await clock.advance(hours(3));
    await app.resume({ pauseId, decision: { approved: false, reason: "duplicate" } }, manager);
    const record = await store.pauses.findByTenantIdAndPauseId("acme", pauseId);
    expect(record).toMatchObject({
      resolution: PauseResolution.Replied,
      answer: { decision: { approved: false, reason: "duplicate" }, responder: "manager-17" },
      askedAt: asked,
      resolvedAt: asked + hours(3).milliseconds,
    });
  });
});

/**
 * How far past a retention window the tests sweep: the sweep that is due fires anywhere in the 30 s
 * after the jump, depending on when the last pass re-armed it, and a record resolved exactly one window
 * before the sweep's instant is still kept.
 */
const PAST_THE_WINDOW_MS = 60_000;

/**
 * Jumps the clock to `at`, lets the sweep that is due run once, and waits until that pass ended (it
 * sets the next sweep's timer then): a real database answers after `clock.advance` has settled, and a
 * pass still running when the clock next moves would leave that sweep unarmed.
 */
async function sweepDueAt(store: Store, clock: TestClock, at: number): Promise<void> {
  const remove = vi.spyOn(store.pauses, "deleteResolvedBefore");
  try {
    clock.set(at);
    await clock.advance(30_000);
    await vi.waitFor(() => expect(remove).toHaveBeenCalled());
    await vi.waitFor(() => expect(clock.pendingTimers).toBeGreaterThan(0));
  } finally {
    remove.mockRestore();
  }
}

@Application({
  name: "short-retention-application",
  workflows: [OfficeWorkflow],
  providers: [Desk, ScriptedModelProvider, TestRefundApprovalChannel, TestExpenseApprovalChannel],
  pauseRecordRetention: hours(2),
})
class ShortRetentionApplication {}

onEachBackendAndPostgres(OfficeApplication, (test) => {
  test("[LF-05] a resolved record is kept 24 h by default, then the sweep removes it: NotPausedError inside the window, UnknownPauseError after; Pending stays", async ({
    app,
    mockLlm,
    store,
    clock,
  }) => {
    const answered = await pauseRefund(app, mockLlm, "t-lf5-a");
    const waiting = await pauseRefund(app, mockLlm, "t-lf5-b");
    await app.resume({ pauseId: answered.pauseId, decision: { approved: true } }, manager);
    const resolvedAt = clock.now();
    const sweepAt = (ms: number) => sweepDueAt(store, clock, resolvedAt + ms);
    await sweepAt(hours(23).milliseconds);
    await expect(
      app.resume({ pauseId: answered.pauseId, decision: { approved: true } }, manager),
    ).rejects.toBeInstanceOf(NotPausedError);
    await sweepAt(hours(24).milliseconds + PAST_THE_WINDOW_MS);
    await expect(
      app.resume({ pauseId: answered.pauseId, decision: { approved: true } }, manager),
    ).rejects.toBeInstanceOf(UnknownPauseError);
    expect(await store.pauses.findByTenantIdAndPauseId("acme", waiting.pauseId)).toMatchObject({
      status: PauseStatus.Pending,
    });
    await sweepAt(hours(24 * 30).milliseconds);
    expect(await store.pauses.findByTenantIdAndPauseId("acme", waiting.pauseId)).toMatchObject({
      status: PauseStatus.Pending,
    });
  });
});

onEachBackendAndPostgres(ShortRetentionApplication, (test) => {
  test("[LF-05] @Application({ pauseRecordRetention }) sets the window; a Resolved pause no pass took is never removed", async ({
    app,
    mockLlm,
    store,
    clock,
  }) => {
    const taken = await pauseRefund(app, mockLlm, "t-short-a");
    await app.resume({ pauseId: taken.pauseId, decision: { approved: true } }, manager);
    const stuck = await pauseRefund(app, mockLlm, "t-short-b");
    await store.pauses.resolve(
      "acme",
      stuck.pauseId,
      { decision: { approved: true }, responder: "manager-17" },
      clock.now(),
    );
    const blocker = await store.leases.acquire({
      key: stuck.threadKey,
      holder: "a-busy-holder",
      now: clock.now(),
      ttlMs: hours(100).milliseconds,
    });
    expect(blocker).toBeDefined();
    await sweepDueAt(store, clock, clock.now() + hours(2).milliseconds + PAST_THE_WINDOW_MS);
    expect(await store.pauses.findByTenantIdAndPauseId("acme", taken.pauseId)).toBeUndefined();
    expect(await store.pauses.findByTenantIdAndPauseId("acme", stuck.pauseId)).toMatchObject({
      status: PauseStatus.Resolved,
    });
  });
});
