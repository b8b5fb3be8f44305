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
