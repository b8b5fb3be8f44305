import { ExecutionStatus, type Store } from "@agboss/core";
import { LEASE_TTL_MS } from "@agboss/core/internal";
import { acme } from "./office.js";

/**
 * Answers a pause and takes it as a holder would that then died: lease held (granted at `now`), pause
 * Taken, tree running. The state a real process leaves (the crash suite kills real ones to reach it),
 * written through the store.
 */
export async function diedAfterTaking(store: Store, now: number, pauseId: string, threadKey: string) {
  const lease = await store.leases.acquire({ key: threadKey, holder: "dead", now, ttlMs: LEASE_TTL_MS });
  if (lease === undefined) throw new Error("the tree's lease is held");
  await store.pauses.resolve(acme.tenantId, pauseId, { decision: { approved: true }, responder: "m-1" }, now);
  const taken = await store.pauses.take(acme.tenantId, pauseId, { at: now }, lease);
  if (taken === undefined) throw new Error("the pause was not taken");
  const stored = await store.executions.findByTenantIdAndExecutionId(acme.tenantId, taken.rootExecutionId);
  if (stored === undefined) throw new Error("no execution");
  await store.executions.save({ ...stored, status: ExecutionStatus.Running }, lease);
  return { lease, executionId: taken.rootExecutionId };
}
