import { ExecutionStatus, PauseStatus, replyWith, StoreUnavailableError } from "@agboss/core";
import { type SqliteHandle, SqliteStore } from "@agboss/store-sqlite";
import { testWith } from "@agboss/testing";
import { describe, expect } from "vitest";
import { Desk, OfficeApplication } from "../../src/fixtures/approval-app.js";
import { acme, pauseRefund } from "../../src/office.js";
import { onEachCommit } from "../../src/sqlite-handles.js";

// On SQLite a pass's checkpoint writes resolve before their commit, so the graph's next writes join it.
// When that commit fails (a disk error here, scripted), the pass must not go on from checkpoints the store
// does not hold: its later writes are refused, it stops, and the tree is carried on from what the store
// holds, where the approved tool's kept result spares running it again.

const RETENTION_MS = 24 * 3_600_000;

/**
 * A store's handle on a fresh file whose next commit can be made to fail, as a failing disk's would.
 * `refuseNextCommit` returns once that commit has been tried and failed.
 */
function failingDisk(): { handle: SqliteHandle; refuseNextCommit(): Promise<void> } {
  let refused: (() => void) | undefined;
  const handle = onEachCommit(() => {
    if (refused === undefined) return;
    refused();
    refused = undefined;
    throw Object.assign(new Error("disk I/O error"), { code: "SQLITE_IOERR" });
  });
  return {
    handle,
    refuseNextCommit: () =>
      new Promise<void>((resolve) => {
        refused = resolve;
      }),
  };
}

const disk = failingDisk();
const test = testWith(OfficeApplication, {
  store: () => SqliteStore.open({ database: disk.handle }),
});

describe("on a SQLite file", () => {
  test("a commit of a pass's checkpoint writes that fails: the pass stops, and recovery finishes the tree without running the approved tool again", async ({
    app,
    mockLlm,
    store,
    clock,
  }) => {
    const { result: paused, pauseId } = await pauseRefund(
      app,
      mockLlm,
      "t-lost-commit",
      { orderId: "ord_1", amountCents: 1000 },
      [
        // The agent's turn after the tool: the tool's result is kept on its pause (committed) and the
        // tool step's checkpoint writes have resolved, their transaction still open. It fails to commit
        // while the model answers (the turn returns once it has), so nothing the pass wrote since the
        // result was kept is in the store, and the turn's own writes come after the failure.
        async () => {
          await disk.refuseNextCommit();
          return replyWith("Refund handled");
        },
        // The same turn again, when recovery carries the tree on.
        replyWith("Refund handled"),
      ],
    );
    expect(paused.status).toBe(ExecutionStatus.Paused);

    const refused = await app
      .resume({ pauseId, decision: { approved: true } }, { tenantId: acme.tenantId, answeredBy: "m-1" })
      .catch((error: unknown) => error);
    // The pass's next write under its lease is refused: it would have built on the lost checkpoints.
    expect(refused).toBeInstanceOf(StoreUnavailableError);
    expect((refused as Error).message).toMatch(/did not commit/);
    expect(app.get(Desk).refunds).toHaveLength(1);
    const pause = await store.pauses.findByTenantIdAndPauseId(acme.tenantId, pauseId);
    expect(pause?.status).toBe(PauseStatus.Taken);
    expect(pause?.toolResult).toBeDefined();

    // Past the lease, the sweep carries the tree on from what the store holds.
    await clock.advance(60_000);
    await app.sweepOnce(RETENTION_MS);
    const record = await app.record(pause?.rootExecutionId as string, { tenantId: acme.tenantId });
    expect(record?.status).toBe(ExecutionStatus.Completed);
    expect(app.get(Desk).refunds).toHaveLength(1);
  });
});
