import { ExecutionStatus, PauseAnswerer, PauseKind, PauseResolution } from "@agboss/core";
import { expect, vi } from "vitest";
import { onEachBackend } from "../../src/backends.js";
import { OfficeApplication } from "../../src/fixtures/approval-app.js";
import { pauseTwo } from "../../src/office.js";

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
        toolCall: { callId: expect.any(String), tool: "refund-card-tool" },
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
});
