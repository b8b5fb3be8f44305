import { LeaseLostError, PauseResolution, PauseStatus, type Store } from "@agboss/core";
import {
  CHECKPOINT_HISTORY_CONFIG_KEY,
  FENCE_CONFIG_KEY,
  type Fence,
  type PauseDecision,
} from "@agboss/core/store";
import { expect } from "vitest";
import type { ConformanceContext } from "./conformance-context.js";
import { checkpoint, json, pauseRecord, storedExecution, uid, versionsOf } from "./fixtures.js";

const TTL = 30_000;

/** A checkpointer config for `threadId`, fenced when `fence` is given. */
function config(threadId: string, fence?: Fence, checkpointId?: string) {
  return {
    configurable: {
      thread_id: threadId,
      checkpoint_ns: "",
      ...(checkpointId === undefined ? {} : { checkpoint_id: checkpointId }),
      ...(fence === undefined ? {} : { [FENCE_CONFIG_KEY]: fence }),
    },
  };
}

/** Holder A takes the lease, lets it lapse, and B takes it over. */
async function takeover(a: Store, b: Store, key: string) {
  const first = await a.leases.acquire({ key, holder: "a", now: 1_000, ttlMs: TTL });
  const second = await b.leases.acquire({ key, holder: "b", now: 1_000 + TTL, ttlMs: TTL });
  expect(second!.epoch).toBeGreaterThan(first!.epoch);
  return { stale: first!, current: second! };
}

/** Whether `error` is a {@link LeaseLostError}, or an error it caused (a write refused after it). */
function isLeaseLost(error: unknown): boolean {
  return (
    error instanceof LeaseLostError || (error as { cause?: unknown } | null)?.cause instanceof LeaseLostError
  );
}

/**
 * How a checkpoint write under a stale fence may end: rejected with {@link LeaseLostError} at once, or
 * resolved unsent, where the store sends a pass's checkpoint write with the pass's next statement and
 * checks its fence there (Postgres): then that statement fails. Either way nothing of it is stored,
 * which the cases check by reading.
 */
async function expectStaleCheckpointWrite(write: Promise<unknown>): Promise<void> {
  const error = await write.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (error !== undefined) expect(error).toBeInstanceOf(LeaseLostError);
}

/** `write` rejects with {@link LeaseLostError}, or with an error it caused (see {@link isLeaseLost}). */
async function expectLeaseLost(write: Promise<unknown>): Promise<void> {
  const error = await write.then(
    () => new Error("the write resolved: a stale holder's write was not refused"),
    (thrown: unknown) => thrown,
  );
  expect(isLeaseLost(error), String(error)).toBe(true);
}

/** Fencing: a superseded holder's pause and checkpoint writes are refused in the same transaction. @internal */
export function fencingCases({ store, test, peerTest }: ConformanceContext): void {
  test("fencing: pause writes carrying the current fence land", async () => {
    const key = uid("tree");
    const lease = (await store().leases.acquire({ key, holder: "a", now: 1_000, ttlMs: TTL }))!;
    const pause = await store().pauses.findOrCreate(pauseRecord(), lease);
    expect(await store().pauses.markSent(pause.tenantId, pause.pauseId, lease)).toBeDefined();
    const decided = await store().pauses.findOrCreate(pauseRecord(), lease);
    const args = {
      at: 2_000,
      answer: { decision: json<PauseDecision>(1) },
      resolution: PauseResolution.Decided,
    };
    expect(await store().pauses.take(decided.tenantId, decided.pauseId, args, lease)).toBeDefined();
    const cancel = { resolution: PauseResolution.Withdrawn, at: 2_000 };
    expect(
      await store().pauses.cancelByTenantIdAndPauseId(pause.tenantId, pause.pauseId, cancel, lease),
    ).toBeDefined();
  });

  test("fencing: findOrCreate under the current fence stores the whole record (ref, deadline, expiry) and, asked again by its key, returns the first one", async () => {
    const key = uid("tree");
    const lease = (await store().leases.acquire({ key, holder: "a", now: 1_000, ttlMs: TTL }))!;
    const first = pauseRecord({
      channelRef: { channel: "C024BE91L", ts: "1700000000.000100" },
      deadline: { at: 90_000, reminders: 2 },
      expiresAt: 120_000,
      ask: json({ tool: "refund", args: { amount: 120, note: 'l\'été \u00e9 "quoted"' } }),
    });
    expect(await store().pauses.findOrCreate(first, lease)).toEqual(first);
    const again = await store().pauses.findOrCreate(
      { ...first, pauseId: uid("pause"), askedAt: 9_000 },
      lease,
    );
    expect(again).toEqual(first);
    expect(
      await store().pauses.list({ tenantId: first.tenantId, rootExecutionId: first.rootExecutionId }),
    ).toEqual([first]);
  });

  test("fencing: under the current fence markSent, saveToolResult, take and cancel do what they do unfenced (the ref kept, only a Pending pause marked, the first result kept, each change once)", async () => {
    const key = uid("tree");
    const lease = (await store().leases.acquire({ key, holder: "a", now: 1_000, ttlMs: TTL }))!;
    const pause = await store().pauses.findOrCreate(pauseRecord(), lease);
    const ref = { channel: "C024BE91L", ts: "1700000000.000100" };
    const sent = await store().pauses.markSent(pause.tenantId, pause.pauseId, lease, ref);
    expect(sent).toEqual({ ...pause, isSent: true, channelRef: ref });
    // Marked again (a retried call): the same record, nothing else changed.
    expect(await store().pauses.markSent(pause.tenantId, pause.pauseId, lease, ref)).toEqual(sent);
    const resolved = await store().pauses.findOrCreate(pauseRecord(), lease);
    await store().pauses.resolve(resolved.tenantId, resolved.pauseId, { decision: json("yes") }, 2_000);
    expect(await store().pauses.markSent(resolved.tenantId, resolved.pauseId, lease)).toBeUndefined();
    expect((await store().pauses.findByTenantIdAndPauseId(resolved.tenantId, resolved.pauseId))?.isSent).toBe(
      false,
    );

    const first = { output: { refundId: "r-1" } };
    // Not Taken yet: nothing stored.
    expect(await store().pauses.saveToolResult(pause.tenantId, pause.pauseId, first, lease)).toBeUndefined();
    const answer = {
      at: 3_000,
      answer: { decision: json<PauseDecision>(1) },
      resolution: PauseResolution.Decided,
    };
    const taken = await store().pauses.take(pause.tenantId, pause.pauseId, answer, lease);
    const kept = await store().pauses.saveToolResult(pause.tenantId, pause.pauseId, first, lease);
    expect(kept).toEqual({ ...taken, toolResult: first });
    const again = await store().pauses.saveToolResult(
      pause.tenantId,
      pause.pauseId,
      { error: "again" },
      lease,
    );
    expect(again).toEqual(kept);
    expect(await store().pauses.saveToolResult("tenant-b", pause.pauseId, first, lease)).toBeUndefined();
    expect(
      (await store().pauses.findByTenantIdAndPauseId(pause.tenantId, pause.pauseId))?.toolResult,
    ).toEqual(first);

    // Taking an answered pause, and withdrawing a pending one: once each, then nothing.
    const take = { at: 4_000 };
    expect(await store().pauses.take(resolved.tenantId, resolved.pauseId, take, lease)).toMatchObject({
      status: PauseStatus.Taken,
    });
    expect(await store().pauses.take(resolved.tenantId, resolved.pauseId, take, lease)).toBeUndefined();
    const open = await store().pauses.findOrCreate(pauseRecord(), lease);
    expect(await store().pauses.take(open.tenantId, open.pauseId, take, lease)).toBeUndefined();
    const cancel = { resolution: PauseResolution.Withdrawn, at: 5_000 };
    expect(
      await store().pauses.cancelByTenantIdAndPauseId(open.tenantId, open.pauseId, cancel, lease),
    ).toMatchObject({ status: PauseStatus.Cancelled, resolution: PauseResolution.Withdrawn });
    expect(
      await store().pauses.cancelByTenantIdAndPauseId(open.tenantId, open.pauseId, cancel, lease),
    ).toBeUndefined();
  });

  test("fencing: pause writes carrying a stale fence throw LeaseLostError and change nothing", async () => {
    const key = uid("tree");
    const { stale } = await takeover(store(), store(), key);
    const pending = await store().pauses.findOrCreate(pauseRecord());
    const resolved = await store().pauses.findOrCreate(pauseRecord());
    await store().pauses.resolve(resolved.tenantId, resolved.pauseId, { decision: json("yes") }, 2_000);
    const before = await store().pauses.list({ tenantId: "tenant-a" });

    const fresh = pauseRecord();
    await expect(store().pauses.findOrCreate(fresh, stale)).rejects.toBeInstanceOf(LeaseLostError);
    await expect(store().pauses.markSent(pending.tenantId, pending.pauseId, stale)).rejects.toBeInstanceOf(
      LeaseLostError,
    );
    const decided = {
      at: 3_000,
      answer: { decision: json<PauseDecision>("no") },
      resolution: PauseResolution.Decided,
    };
    await expect(
      store().pauses.take(pending.tenantId, pending.pauseId, decided, stale),
    ).rejects.toBeInstanceOf(LeaseLostError);
    await expect(
      store().pauses.take(resolved.tenantId, resolved.pauseId, { at: 3_000 }, stale),
    ).rejects.toBeInstanceOf(LeaseLostError);
    const cancel = { resolution: PauseResolution.Cancelled, at: 3_000 };
    await expect(
      store().pauses.cancelByTenantIdAndPauseId(pending.tenantId, pending.pauseId, cancel, stale),
    ).rejects.toBeInstanceOf(LeaseLostError);

    expect(await store().pauses.list({ tenantId: "tenant-a" })).toEqual(before);
    expect(
      await store().pauses.findByTenantIdAndIdempotencyKey(fresh.tenantId, fresh.idempotencyKey),
    ).toBeUndefined();
  });

  test("fencing: a tool result and an execution record carrying a stale fence throw LeaseLostError and change nothing", async () => {
    const key = uid("tree");
    const { stale, current } = await takeover(store(), store(), key);
    const pause = await store().pauses.findOrCreate(pauseRecord());
    await store().pauses.take(pause.tenantId, pause.pauseId, {
      at: 2_000,
      answer: { decision: json<PauseDecision>(1) },
      resolution: PauseResolution.Decided,
    });
    await expect(
      store().pauses.saveToolResult(pause.tenantId, pause.pauseId, { output: "stale" }, stale),
    ).rejects.toBeInstanceOf(LeaseLostError);
    expect(
      (await store().pauses.findByTenantIdAndPauseId(pause.tenantId, pause.pauseId))?.toolResult,
    ).toBeUndefined();
    const kept = await store().pauses.saveToolResult(
      pause.tenantId,
      pause.pauseId,
      { output: "ok" },
      current,
    );
    expect(kept?.toolResult).toEqual({ output: "ok" });

    const execution = storedExecution({ status: "running" });
    await store().executions.save(execution, current);
    await expect(
      store().executions.save({ ...execution, status: "completed", updatedAt: 9_000 }, stale),
    ).rejects.toBeInstanceOf(LeaseLostError);
    expect(
      await store().executions.findByTenantIdAndExecutionId(execution.tenantId, execution.executionId),
    ).toEqual(execution);
  });

  test("fencing: a record saved with release lands together with the lease's release; with a stale fence neither does", async () => {
    const key = uid("tree");
    const { stale, current } = await takeover(store(), store(), key);
    const execution = storedExecution({ status: "running" });
    await store().executions.save(execution, current);
    await expect(
      store().executions.save({ ...execution, status: "failed", updatedAt: 8_000 }, stale, { release: true }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    expect((await store().leases.find(key))?.expiresAt).toBe(current.expiresAt);
    expect(
      (await store().executions.findByTenantIdAndExecutionId(execution.tenantId, execution.executionId))
        ?.status,
    ).toBe("running");

    const ended = { ...execution, status: "completed", updatedAt: 9_000 };
    await store().executions.save(ended, current, { release: true });
    expect(
      await store().executions.findByTenantIdAndExecutionId(execution.tenantId, execution.executionId),
    ).toEqual(ended);
    const released = await store().leases.find(key);
    expect(released?.epoch).toBe(current.epoch);
    expect(released?.expiresAt).toBeLessThanOrEqual(1_000 + TTL);
    // Released: anyone may take the tree now, before the lease would have run out.
    const next = await store().leases.acquire({ key, holder: "c", now: 1_000 + TTL + 1, ttlMs: TTL });
    expect(next?.epoch).toBe(current.epoch + 1);
  });

  test("fencing: a fence for a lease that was never granted is refused", async () => {
    const fence = { key: uid("tree"), epoch: 1 };
    const record = pauseRecord();
    await expect(store().pauses.findOrCreate(record, fence)).rejects.toBeInstanceOf(LeaseLostError);
    expect(await store().pauses.findByTenantIdAndPauseId(record.tenantId, record.pauseId)).toBeUndefined();
    const c = checkpoint();
    await expect(
      store().checkpointer.put(config(uid("thread"), fence), c, meta(), versionsOf(c)),
    ).rejects.toBeInstanceOf(LeaseLostError);
  });

  test("fencing: checkpointer put and putWrites carrying a stale fence write nothing, and the holder is told LeaseLostError at the write or at its next one", async () => {
    const key = uid("tree");
    const threadId = uid("thread");
    const { stale, current } = await takeover(store(), store(), key);
    const base = checkpoint({ messages: ["base"] });
    const saved = await store().checkpointer.put(config(threadId, current), base, meta(), versionsOf(base));
    await store().checkpointer.putWrites(saved, [["messages", "from b"]], "task-b");

    const forked = checkpoint({ messages: ["fork"] });
    await expectStaleCheckpointWrite(
      store().checkpointer.put(config(threadId, stale, base.id), forked, meta(), versionsOf(forked)),
    );
    const staleWrite = config(threadId, stale, base.id);
    await expectStaleCheckpointWrite(
      store().checkpointer.putWrites(staleWrite, [["messages", "from a"]], "task-a"),
    );

    const latest = await store().checkpointer.getTuple(config(threadId));
    expect(latest?.checkpoint.id).toBe(base.id);
    expect(latest?.checkpoint.channel_values).toEqual({ messages: ["base"] });
    expect(latest?.pendingWrites).toEqual([["task-b", "messages", "from b"]]);
    expect(await store().checkpointer.getTuple(config(threadId, undefined, forked.id))).toBeUndefined();
    // The holder's next fenced write is refused (its own fence check would refuse it in any case).
    await expectLeaseLost(store().pauses.findOrCreate(pauseRecord(), stale));
  });

  test("fencing: a stale put that would keep only the latest checkpoint writes and deletes nothing", async () => {
    const key = uid("tree");
    const threadId = uid("thread");
    const { stale, current } = await takeover(store(), store(), key);
    const latestOnly = (fence: Fence, parentId?: string) => {
      const base = config(threadId, fence, parentId);
      return { configurable: { ...base.configurable, [CHECKPOINT_HISTORY_CONFIG_KEY]: "latest" } };
    };
    const first = checkpoint({ messages: ["first"] });
    const savedFirst = await store().checkpointer.put(latestOnly(current), first, meta(), versionsOf(first));
    await store().checkpointer.putWrites(savedFirst, [["messages", "pending"]], "task-b");

    const fromStale = checkpoint({ messages: ["stale"] });
    await expectStaleCheckpointWrite(
      store().checkpointer.put(latestOnly(stale, first.id), fromStale, meta(), versionsOf(fromStale)),
    );

    // The current holder's checkpoint, its value and its pending writes are all still there.
    const latest = await store().checkpointer.getTuple(config(threadId));
    expect(latest?.checkpoint.id).toBe(first.id);
    expect(latest?.checkpoint.channel_values).toEqual({ messages: ["first"] });
    expect(latest?.pendingWrites).toEqual([["task-b", "messages", "pending"]]);
    expect(await store().checkpointer.getTuple(config(threadId, undefined, fromStale.id))).toBeUndefined();
    await expectLeaseLost(store().pauses.findOrCreate(pauseRecord(), stale));

    // The current holder's next put lands (whether a store then prunes is its own choice).
    const second = checkpoint({ messages: ["second"] });
    await store().checkpointer.put(latestOnly(current, first.id), second, meta(), versionsOf(second));
    expect((await store().checkpointer.getTuple(config(threadId)))?.checkpoint.id).toBe(second.id);
  });

  const scenario = async (a: Store, b: Store) => {
    const key = uid("tree");
    const threadId = uid("thread");
    const leaseA = (await a.leases.acquire({ key, holder: "a", now: 1_000, ttlMs: TTL }))!;
    const first = checkpoint({ step: 1 });
    const savedA = await a.checkpointer.put(config(threadId, leaseA), first, meta(), versionsOf(first));
    const leaseB = (await b.leases.acquire({ key, holder: "b", now: 1_000 + TTL, ttlMs: TTL }))!;

    const fromA = checkpoint({ step: "a" });
    const parentA = { configurable: { ...savedA.configurable, [FENCE_CONFIG_KEY]: leaseA } };
    await expectStaleCheckpointWrite(a.checkpointer.put(parentA, fromA, meta(), versionsOf(fromA)));
    const pauseA = pauseRecord();
    await expectLeaseLost(a.pauses.findOrCreate(pauseA, leaseA));

    const fromB = checkpoint({ step: "b" });
    const parentB = { configurable: { ...savedA.configurable, [FENCE_CONFIG_KEY]: leaseB } };
    await b.checkpointer.put(parentB, fromB, meta(), versionsOf(fromB));
    const pauseB = await b.pauses.findOrCreate(pauseRecord(), leaseB);

    for (const s of [a, b]) {
      const latest = await s.checkpointer.getTuple(config(threadId));
      expect(latest?.checkpoint.id).toBe(fromB.id);
      expect(latest?.checkpoint.channel_values).toEqual({ step: "b" });
      expect(await s.pauses.findByTenantIdAndPauseId(pauseA.tenantId, pauseA.pauseId)).toBeUndefined();
      expect(await s.pauses.findByTenantIdAndPauseId(pauseB.tenantId, pauseB.pauseId)).toEqual(pauseB);
    }
    const history = [];
    for await (const tuple of b.checkpointer.list(config(threadId))) history.push(tuple.checkpoint.id);
    expect(history.sort()).toEqual([first.id, fromB.id].sort());
  };

  test("fencing: after a takeover the old holder's checkpoint and pause writes are refused and the new holder's land", () =>
    scenario(store(), store()));
  peerTest("fencing: a takeover through another store instance fences this one's writes", (peer) =>
    scenario(store(), peer),
  );
}

function meta() {
  return { source: "loop" as const, step: 1, parents: {} };
}
