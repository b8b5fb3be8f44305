import {
  ExecutionStatus,
  NotPausedError,
  PauseAnswererError,
  PauseResolution,
  PauseStatus,
  UnknownPauseError,
} from "@agboss/core";
import { expect, vi } from "vitest";
import { frozen, onEachBackendAndPostgres } from "../../src/backends.js";
import { ApprovedRefundTool, Desk, OfficeApplication } from "../../src/fixtures/approval-app.js";
import { pauseRefund } from "../../src/office.js";

// app.answer records an answer and returns; the tree moves on in the background (phase 2 of resume).

const manager = { tenantId: "acme", answeredBy: "manager-17" } as const;

onEachBackendAndPostgres(OfficeApplication, (test) => {
  test("answer returns once the answer is stored and audited, before the tool runs; the tree then moves on in the background", async ({
    app,
    mockLlm,
    mockOf,
    store,
  }) => {
    const { pauseId, result } = await pauseRefund(app, mockLlm, "t-answer");
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tool = mockOf(ApprovedRefundTool).run;
    tool.mockImplementation(async () => {
      await gate;
      return { status: "refunded ord_1" };
    });
    const receipt = await app.answer({ pauseId, decision: { approved: true } }, manager);
    expect(receipt).toEqual({
      pauseId,
      threadId: "t-answer",
      executionId: result.executionId,
      resolvedAt: expect.any(String),
    });
    const stored = await store.pauses.findByTenantIdAndPauseId("acme", pauseId);
    expect([PauseStatus.Resolved, PauseStatus.Taken]).toContain(stored?.status);
    expect(stored?.answer).toMatchObject({ decision: { approved: true }, responder: "manager-17" });
    const audited = await app.record(result.executionId, { tenantId: "acme" });
    expect(audited?.pauses).toEqual([
      expect.objectContaining({ responder: "manager-17", resolution: PauseResolution.Replied }),
    ]);
    expect(audited?.status).not.toBe(ExecutionStatus.Completed);
    release();
    await app.idle();
    expect(tool).toHaveBeenCalledTimes(1);
    const done = await app.record(result.executionId, { tenantId: "acme" });
    expect(done?.status).toBe(ExecutionStatus.Completed);
    expect(done?.output).toEqual({ text: "Refund handled" });
  });

  test("answer refuses what resume refuses, before anything is stored", async ({ app, mockLlm, store }) => {
    const { pauseId, threadKey } = await pauseRefund(app, mockLlm, "t-answer-bad");
    const before = await frozen(store, "acme", pauseId, threadKey);
    await expect(
      app.answer({ pauseId: "nope", decision: { approved: true } }, manager),
    ).rejects.toBeInstanceOf(UnknownPauseError);
    await expect(
      app.answer({ pauseId, decision: { approved: true } }, { tenantId: "acme", ownerId: "alice" }),
    ).rejects.toBeInstanceOf(PauseAnswererError);
    expect(await frozen(store, "acme", pauseId, threadKey)).toBe(before);
    await app.answer({ pauseId, decision: { approved: false, reason: "not this one" } }, manager);
    await expect(app.answer({ pauseId, decision: { approved: true } }, manager)).rejects.toBeInstanceOf(
      NotPausedError,
    );
    await app.idle();
    expect(app.get(Desk).refunds).toEqual([]);
  });

  test("an answer whose process stops before the tree moved is taken by another instance's sweep", async ({
    app,
    openApp,
    mockLlm,
    store,
    clock,
  }) => {
    const { pauseId, result, threadKey } = await pauseRefund(app, mockLlm, "t-answer-stop");
    // Another call holds the tree, so the background move waits for its lease; then this process stops.
    await store.leases.acquire({
      key: threadKey,
      holder: "a-holder-that-died",
      now: clock.now(),
      ttlMs: 30_000,
    });
    const other = await openApp();
    await app.answer({ pauseId, decision: { approved: true } }, manager);
    await app.close();
    expect((await store.pauses.findByTenantIdAndPauseId("acme", pauseId))?.status).toBe(PauseStatus.Resolved);
    expect(app.get(Desk).refunds).toEqual([]);
    await clock.advance(30_000);
    await vi.waitFor(async () =>
      expect((await other.record(result.executionId, { tenantId: "acme" }))?.status).toBe(
        ExecutionStatus.Completed,
      ),
    );
    expect(other.get(Desk).refunds).toHaveLength(1);
  });
});
