import { ExecutionStatus } from "@agboss/core";
import { type SqliteHandle, SqliteStore } from "@agboss/store-sqlite";
import { testWith } from "@agboss/testing";
import { describe, expect } from "vitest";
import { Desk, OfficeApplication } from "../../src/fixtures/approval-app.js";
import { acme, pauseRefund } from "../../src/office.js";
import { onEachCommit } from "../../src/sqlite-handles.js";

// What carrying on an answered tree costs in commits (each one a disk sync on SQLite's default FULL):
// the sweep's claim of a tree (its pause checked, the lease taken, the tree marked running) is one unit
// of work, like phase 1 of a resume, so a recovery commits no more often than a resume does.

const RETENTION_MS = 24 * 3_600_000;

/** A store's handle on a fresh file that counts the commits run through it. */
function countingCommits(): { handle: SqliteHandle; commits: () => number } {
  let commits = 0;
  const handle = onEachCommit(() => {
    commits += 1;
  });
  return { handle, commits: () => commits };
}

const counting = countingCommits();
const test = testWith(OfficeApplication, {
  store: async () => {
    const store = await SqliteStore.open({ database: counting.handle });
    return store;
  },
});

describe("on a SQLite file", () => {
  test("recovering an answered tree commits as often as resuming one: the sweep claims it in one unit", async ({
    app,
    mockLlm,
    store,
    clock,
  }) => {
    // A resume, phase 1 and 2, counted from the answer to the answer's end.
    const first = await pauseRefund(app, mockLlm, "t-resumed");
    const beforeResume = counting.commits();
    const resumed = await app.resume(
      { pauseId: first.pauseId, decision: { approved: true } },
      { tenantId: acme.tenantId, answeredBy: "m-1" },
    );
    expect(resumed.status).toBe(ExecutionStatus.Completed);
    const resumeCommits = counting.commits() - beforeResume;

    // What one sweep costs with nothing to carry on (its retention deletes), then one that recovers.
    const beforeEmpty = counting.commits();
    await app.sweepOnce(RETENTION_MS);
    const emptySweep = counting.commits() - beforeEmpty;
    const second = await pauseRefund(app, mockLlm, "t-recovered");
    // Phase 1 only, as a resumer that died right after recording the answer leaves it.
    const resolved = await store.pauses.resolve(
      acme.tenantId,
      second.pauseId,
      { decision: { approved: true }, responder: "m-1" },
      clock.now(),
    );
    await clock.advance(1_001);
    const beforeSweep = counting.commits();
    await app.sweepOnce(RETENTION_MS);
    const recoveryCommits = counting.commits() - beforeSweep - emptySweep;

    const record = await app.record(resolved?.rootExecutionId as string, { tenantId: acme.tenantId });
    expect(record?.status).toBe(ExecutionStatus.Completed);
    expect(app.get(Desk).refunds).toHaveLength(2);
    expect(resumeCommits).toBeGreaterThan(0);
    expect(recoveryCommits).toBe(resumeCommits);
  });
});
