import { ExecutionStatus, PauseStatus } from "@agboss/core";
import type { Store } from "@agboss/core/store";
import { expect } from "vitest";
import { onEachBackendAndPostgres } from "../../src/backends.js";
import { Desk, OfficeApplication } from "../../src/fixtures/approval-app.js";
import { acme, pauseRefund } from "../../src/office.js";

// A resume reads the pause it answers once, to record the answer; the pass it moves and the step that
// waited on the pause go on from the record phase 1 stored instead of reading it again. The take that
// follows is conditional, so what matters is that the tool still runs once, on the answer given. And
// the pass that starts an execution creates a step's pause without a read first (nothing can be there).

/** Counts the calls of the pause lookups on `store` from now on. */
function countingPauseReads(store: Store): { byId: () => number; byKey: () => number } {
  const pauses = store.pauses;
  const counts = { byId: 0, byKey: 0 };
  const byId = pauses.findByTenantIdAndPauseId.bind(pauses);
  const byKey = pauses.findByTenantIdAndIdempotencyKey.bind(pauses);
  pauses.findByTenantIdAndPauseId = (...args) => {
    counts.byId += 1;
    return byId(...args);
  };
  pauses.findByTenantIdAndIdempotencyKey = (...args) => {
    counts.byKey += 1;
    return byKey(...args);
  };
  return { byId: () => counts.byId, byKey: () => counts.byKey };
}

onEachBackendAndPostgres(OfficeApplication, (test) => {
  test("a resume reads its pause once: the pass and the waiting step take the record phase 1 stored", async ({
    app,
    mockLlm,
    store,
  }) => {
    const { pauseId } = await pauseRefund(app, mockLlm, "t-read-once");
    const reads = countingPauseReads(store);
    const resumed = await app.resume(
      { pauseId, decision: { approved: true } },
      { tenantId: acme.tenantId, answeredBy: "manager-17" },
    );
    expect(resumed.status).toBe(ExecutionStatus.Completed);
    expect(app.get(Desk).refunds).toHaveLength(1);
    expect(reads.byId()).toBe(1);
    expect(reads.byKey()).toBe(0);
    const pause = await store.pauses.findByTenantIdAndPauseId(acme.tenantId, pauseId);
    expect(pause?.status).toBe(PauseStatus.Taken);
    expect(pause?.toolResult).toBeDefined();
  });

  test("a pause another holder took after the answer: the pass goes on from the result it kept, the tool does not run again", async ({
    app,
    mockLlm,
    store,
    clock,
  }) => {
    const { result, pauseId, threadKey } = await pauseRefund(app, mockLlm, "t-taken-meanwhile");
    // Another instance holds the tree: the answer's move waits for the lease, with the pause as phase 1
    // stored it (Resolved) in hand.
    const other = await store.leases.acquire({
      key: threadKey,
      holder: "other-instance",
      now: clock.now(),
      ttlMs: 60_000,
    });
    expect(other).toBeDefined();
    await app.answer(
      { pauseId, decision: { approved: true } },
      { tenantId: acme.tenantId, answeredBy: "manager-17" },
    );
    // Meanwhile that instance's step takes the pause, runs the tool and keeps its result; then lets go.
    const taken = await store.pauses.take(acme.tenantId, pauseId, { at: clock.now() }, other);
    expect(taken?.status).toBe(PauseStatus.Taken);
    await store.pauses.saveToolResult(
      acme.tenantId,
      pauseId,
      { output: { status: "refunded elsewhere" } },
      other,
    );
    await store.leases.release(other as NonNullable<typeof other>);
    await app.idle();
    const record = await app.record(result.executionId, { tenantId: acme.tenantId });
    expect(record?.status).toBe(ExecutionStatus.Completed);
    expect(app.get(Desk).refunds).toHaveLength(0);
    const pause = await store.pauses.findByTenantIdAndPauseId(acme.tenantId, pauseId);
    expect(pause?.toolResult).toEqual({ output: { status: "refunded elsewhere" } });
  });

  test("the pass that starts an execution creates a step's pause without looking it up first", async ({
    app,
    mockLlm,
    store,
  }) => {
    const reads = countingPauseReads(store);
    const { result, pauseId } = await pauseRefund(app, mockLlm, "t-create-unread");
    expect(result.status).toBe(ExecutionStatus.Paused);
    expect(reads.byKey()).toBe(0);
    const pause = await store.pauses.findByTenantIdAndPauseId(acme.tenantId, pauseId);
    expect(pause).toMatchObject({ status: PauseStatus.Pending, isSent: true });
  });
});
