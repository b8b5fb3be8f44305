import type { PauseDecision } from "@agboss/core/store";
import { expect } from "vitest";
import type { ConformanceContext } from "./conformance-context.js";
import { json, pauseRecord, storedExecution, uid } from "./fixtures.js";

const TTL = 30_000;

/** Units of work: writes made inside `store.atomically` land together or not at all. @internal */
export function unitOfWorkCases({ store, test }: ConformanceContext): void {
  test("atomically: the writes of a unit land together, and its reads see them before it ends", async () => {
    const pause = await store().pauses.findOrCreate(pauseRecord());
    const execution = storedExecution({ status: "paused" });
    await store().executions.save(execution);
    const key = uid("tree");
    const seen = await store().atomically(async () => {
      const resolved = await store().pauses.resolve(
        pause.tenantId,
        pause.pauseId,
        { decision: json<PauseDecision>("yes") },
        2_000,
      );
      const lease = await store().leases.acquire({ key, holder: "a", now: 2_000, ttlMs: TTL });
      await store().executions.save({ ...execution, status: "running", updatedAt: 2_000 }, lease);
      const read = await store().executions.findByTenantIdAndExecutionId(
        execution.tenantId,
        execution.executionId,
      );
      return { resolved: resolved?.status, lease: lease?.epoch, read: read?.status };
    });
    expect(seen).toEqual({ resolved: "resolved", lease: 1, read: "running" });
    expect((await store().pauses.findByTenantIdAndPauseId(pause.tenantId, pause.pauseId))?.status).toBe(
      "resolved",
    );
    expect((await store().leases.find(key))?.holder).toBe("a");
  });

  test("atomically: a unit that throws writes nothing", async () => {
    const pause = await store().pauses.findOrCreate(pauseRecord());
    const execution = storedExecution({ status: "paused" });
    await store().executions.save(execution);
    const key = uid("tree");
    const failure = new Error("the unit gives up");
    await expect(
      store().atomically(async () => {
        await store().pauses.resolve(
          pause.tenantId,
          pause.pauseId,
          { decision: json<PauseDecision>("yes") },
          2_000,
        );
        await store().leases.acquire({ key, holder: "a", now: 2_000, ttlMs: TTL });
        await store().executions.save({ ...execution, status: "running", updatedAt: 2_000 });
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect((await store().pauses.findByTenantIdAndPauseId(pause.tenantId, pause.pauseId))?.status).toBe(
      "pending",
    );
    expect(await store().leases.find(key)).toBeUndefined();
    expect(
      (await store().executions.findByTenantIdAndExecutionId(execution.tenantId, execution.executionId))
        ?.status,
    ).toBe("paused");
  });
}
