import { ExecutionStatus } from "@agboss/core";
import { SqliteStore } from "@agboss/store-sqlite";
import { testWith } from "@agboss/testing";
import Database from "better-sqlite3";
import { describe, expect } from "vitest";
import { Desk, OfficeApplication } from "../../src/fixtures/approval-app.js";
import { acme, pauseRefund } from "../../src/office.js";
import { onEachCommit } from "../../src/sqlite-handles.js";

// On SQLite the unit that starts an execution (its lease, thread and record) and phase 1 of a resume (the
// answer, its audit entry, the lease and the running mark) resolve once applied under the lease they
// took: the pass's next writes join their commit, so each costs no commit of its own. What is on disk
// is read by a second connection just before every commit, so it sees what each earlier commit left.

interface Seen {
  readonly execution: boolean;
  /** Whether a checkpoint of the tree is on disk (its thread is the tree's lease key). */
  readonly checkpointed: boolean;
  readonly pause: string | undefined;
  readonly audited: boolean;
}

let peek: (() => void) | undefined;
const handle = onEachCommit(() => peek?.());
const test = testWith(OfficeApplication, {
  store: () => SqliteStore.open({ database: handle }),
});

/** What another connection sees on disk of `threadId`'s execution and its one pause, before each commit. */
function watchCommits(threadId: string): { seen: Seen[]; stop(): Seen } {
  const reader = new Database(handle.name, { readonly: true });
  const look = (): Seen => {
    const execution = reader
      .prepare("select count(*) as n from agboss_executions where tenant_id = ? and thread_id = ?")
      .get(acme.tenantId, threadId) as { n: number };
    const pause = reader
      .prepare("select status from agboss_pauses where tenant_id = ? and thread_id = ?")
      .get(acme.tenantId, threadId) as { status: string } | undefined;
    const checkpoints = reader
      .prepare("select count(*) as n from agboss_checkpoints where thread_id = ?")
      .get(`${acme.tenantId}/${threadId}`) as { n: number };
    const audited = reader
      .prepare("select count(*) as n from agboss_pause_answers where tenant_id = ?")
      .get(acme.tenantId) as { n: number };
    return {
      execution: execution.n > 0,
      checkpointed: checkpoints.n > 0,
      pause: pause?.status,
      audited: audited.n > 0,
    };
  };
  const seen: Seen[] = [];
  peek = () => seen.push(look());
  return {
    seen,
    stop() {
      peek = undefined;
      const last = look();
      reader.close();
      return last;
    },
  };
}

describe("on a SQLite file", () => {
  test("a start's records are committed with the pass's first writes: never on disk without a checkpoint", async ({
    app,
    mockLlm,
  }) => {
    const watch = watchCommits("t-start");
    const { result } = await pauseRefund(app, mockLlm, "t-start");
    const last = watch.stop();
    expect(result.status).toBe(ExecutionStatus.Paused);
    expect(last).toEqual({ execution: true, checkpointed: true, pause: "pending", audited: false });
    // Before each commit, either nothing of the start is on disk, or its first checkpoint is there too.
    expect(watch.seen[0]).toEqual({
      execution: false,
      checkpointed: false,
      pause: undefined,
      audited: false,
    });
    for (const seen of watch.seen) expect(seen.checkpointed).toBe(seen.execution);
  });

  test("phase 1 of a resume is committed with the take of its pause: the answer is never on disk untaken", async ({
    app,
    mockLlm,
  }) => {
    const { pauseId } = await pauseRefund(app, mockLlm, "t-resume");
    const watch = watchCommits("t-resume");
    const done = await app.resume(
      { pauseId, decision: { approved: true } },
      { tenantId: acme.tenantId, answeredBy: "m-1" },
    );
    const last = watch.stop();
    expect(done.status).toBe(ExecutionStatus.Completed);
    expect(app.get(Desk).refunds).toHaveLength(1);
    expect(last).toEqual({ execution: true, checkpointed: true, pause: "taken", audited: true });
    // The pause goes from pending to taken in one commit, its audit entry with it.
    expect(watch.seen.map((seen) => seen.pause)).not.toContain("resolved");
    expect(watch.seen[0]).toEqual({ execution: true, checkpointed: true, pause: "pending", audited: false });
    for (const seen of watch.seen) expect(seen.audited).toBe(seen.pause === "taken");
  });
});
