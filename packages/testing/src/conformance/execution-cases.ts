import { expect } from "vitest";
import type { ConformanceContext } from "./conformance-context.js";
import { RICH_JSON, storedExecution, uid } from "./fixtures.js";

/** Execution records and the audit trail of their pauses. @internal */
export function executionCases({ store, test }: ConformanceContext): void {
  test("executions: save then find returns the execution and its JSON record unchanged", async () => {
    const execution = storedExecution({ record: RICH_JSON, parentExecutionId: "parent-1" });
    await store().executions.save(execution);
    expect(await store().executions.findByTenantIdAndExecutionId("tenant-a", execution.executionId)).toEqual(
      execution,
    );
    expect(
      await store().executions.findByTenantIdAndExecutionId("tenant-b", execution.executionId),
    ).toBeUndefined();
  });

  test("executions: save replaces the execution with the same id", async () => {
    const execution = storedExecution();
    await store().executions.save(execution);
    const done = { ...execution, status: "completed", updatedAt: 5_000, record: { done: true } };
    await store().executions.save(done);
    expect(await store().executions.findByTenantIdAndExecutionId("tenant-a", execution.executionId)).toEqual(
      done,
    );
    expect(await store().executions.listByTenantIdAndThreadId("tenant-a", execution.threadId)).toHaveLength(
      1,
    );
  });

  test("executions: listByTenantIdAndThreadId returns the thread's executions oldest first", async () => {
    const threadId = uid("thread");
    const late = storedExecution({ threadId, startedAt: 3_000 });
    const early = storedExecution({ threadId, startedAt: 1_000 });
    const middle = storedExecution({ threadId, startedAt: 2_000 });
    for (const e of [late, early, middle]) await store().executions.save(e);
    await store().executions.save(storedExecution({ threadId, tenantId: "tenant-b" }));
    await store().executions.save(storedExecution({ threadId: uid("thread") }));
    const listed = await store().executions.listByTenantIdAndThreadId("tenant-a", threadId);
    expect(listed.map((e) => e.executionId)).toEqual([early, middle, late].map((e) => e.executionId));
  });

  test("executions: listByStatus filters across tenants, oldest update first, up to the limit", async () => {
    const a = storedExecution({ status: "paused", updatedAt: 3_000 });
    const b = storedExecution({ status: "running", updatedAt: 1_000, tenantId: "tenant-b" });
    const c = storedExecution({ status: "paused", updatedAt: 2_000, tenantId: "tenant-c" });
    const d = storedExecution({ status: "completed", updatedAt: 500 });
    for (const e of [a, b, c, d]) await store().executions.save(e);
    const listed = await store().executions.listByStatus(["paused", "running"], 10);
    expect(listed.map((e) => e.executionId)).toEqual([b, c, a].map((e) => e.executionId));
    // Keys only: the sweep pages through a backlog and never needs the records.
    const { record: _record, ...keys } = b;
    expect(listed[0]).toEqual(keys);
    const limited = await store().executions.listByStatus(["paused", "running"], 2);
    expect(limited.map((e) => e.executionId)).toEqual([b, c].map((e) => e.executionId));
    expect(await store().executions.listByStatus(["failed"], 10)).toEqual([]);
  });

  test("executions: listByStatus pages on from `after` (ties by tenantId, then executionId)", async () => {
    const rows = [
      storedExecution({ status: "running", updatedAt: 1_000, tenantId: "tenant-b", executionId: "e-2" }),
      storedExecution({ status: "running", updatedAt: 1_000, tenantId: "tenant-a", executionId: "e-9" }),
      storedExecution({ status: "running", updatedAt: 1_000, tenantId: "tenant-b", executionId: "e-1" }),
      storedExecution({ status: "running", updatedAt: 2_000, tenantId: "tenant-a", executionId: "e-5" }),
      storedExecution({ status: "paused", updatedAt: 1_500, tenantId: "tenant-a", executionId: "e-7" }),
    ];
    for (const e of rows) await store().executions.save(e);
    const seen: string[] = [];
    let after: { updatedAt: number; tenantId: string; executionId: string } | undefined;
    for (let page = 0; page < 10; page += 1) {
      const found = await store().executions.listByStatus(["running"], 2, after);
      seen.push(...found.map((e) => `${e.tenantId}/${e.executionId}`));
      const last = found.at(-1);
      if (found.length < 2 || last === undefined) break;
      after = { updatedAt: last.updatedAt, tenantId: last.tenantId, executionId: last.executionId };
    }
    expect(seen).toEqual(["tenant-a/e-9", "tenant-b/e-1", "tenant-b/e-2", "tenant-a/e-5"]);
  });

  test("executions: savePauseAnswer writes once per (tenantId, idempotencyKey)", async () => {
    const entry = {
      tenantId: "tenant-a",
      rootExecutionId: "root-1",
      idempotencyKey: uid("step"),
      askedAt: 1_000,
    };
    await store().executions.savePauseAnswer("tenant-a", "root-1", {
      ...entry,
      answer: { decision: "approve" },
    });
    await store().executions.savePauseAnswer("tenant-a", "root-1", {
      ...entry,
      answer: { decision: "reject" },
    });
    const answers = await store().executions.findPauseAnswersByTenantIdAndRootExecutionId(
      "tenant-a",
      "root-1",
    );
    expect(answers).toEqual([{ ...entry, answer: { decision: "approve" } }]);
  });

  test("executions: findPauseAnswers returns a tree's entries in askedAt order with JSON unchanged", async () => {
    const root = uid("root");
    const entry = (askedAt: number, answer: unknown) => ({
      tenantId: "tenant-a",
      rootExecutionId: root,
      idempotencyKey: uid("step"),
      askedAt,
      answer,
    });
    const third = entry(3_000, { n: 3 });
    const first = entry(1_000, RICH_JSON);
    const second = entry(2_000, ["two"]);
    for (const e of [third, first, second]) await store().executions.savePauseAnswer("tenant-a", root, e);
    await store().executions.savePauseAnswer("tenant-b", root, { ...entry(500, 0), tenantId: "tenant-b" });
    expect(await store().executions.findPauseAnswersByTenantIdAndRootExecutionId("tenant-a", root)).toEqual([
      first,
      second,
      third,
    ]);
  });
}
