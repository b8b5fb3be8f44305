import { expect } from "vitest";
import type { ConformanceContext } from "./conformance-context.js";
import { threadRecord } from "./fixtures.js";

/** Threads: save is an upsert; lookups stay inside a tenant. @internal */
export function threadCases({ store, test }: ConformanceContext): void {
  test("threads: save then find returns the thread", async () => {
    const thread = threadRecord();
    await store().threads.save(thread);
    expect(await store().threads.findByTenantIdAndThreadId(thread.tenantId, thread.threadId)).toEqual(thread);
  });

  test("threads: save replaces the stored thread", async () => {
    const thread = threadRecord();
    await store().threads.save(thread);
    const newer = { ...thread, latestExecutionId: "exec-2", updatedAt: 2_000 };
    await store().threads.save(newer);
    expect(await store().threads.findByTenantIdAndThreadId(thread.tenantId, thread.threadId)).toEqual(newer);
  });

  test("threads: find never returns another tenant's thread", async () => {
    const thread = threadRecord({ tenantId: "tenant-a" });
    await store().threads.save(thread);
    expect(await store().threads.findByTenantIdAndThreadId("tenant-b", thread.threadId)).toBeUndefined();
  });

  test("threads: records are copied in and out", async () => {
    const thread = threadRecord();
    const input = { ...thread };
    await store().threads.save(input);
    (input as { ownerId: string }).ownerId = "mallory";
    const found = await store().threads.findByTenantIdAndThreadId(thread.tenantId, thread.threadId);
    (found as { ownerId: string }).ownerId = "mallory";
    expect(await store().threads.findByTenantIdAndThreadId(thread.tenantId, thread.threadId)).toEqual(thread);
  });
}
