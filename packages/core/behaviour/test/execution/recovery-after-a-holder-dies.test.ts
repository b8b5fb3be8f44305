import { type App, callTool, ExecutionStatus, LeaseLostError, PauseStatus, replyWith } from "@agboss/core";
import { LEASE_RENEW_MS, LEASE_TTL_MS } from "@agboss/core/internal";
import type { TestClock } from "@agboss/testing";
import { expect, vi } from "vitest";
import {
  onEachBackend,
  onEachBackendAndPostgres,
  postgresBackend,
  postgresStoreOf,
} from "../../src/backends.js";
import { diedAfterTaking } from "../../src/dead-holder.js";
import {
  ApprovedRefundTool,
  BookExpenseTool,
  Desk,
  OfficeApplication,
} from "../../src/fixtures/approval-app.js";
import {
  acme,
  holdCarefulTool,
  holdRefundTool,
  pauseExpense,
  pauseRefund,
  scriptThread,
} from "../../src/office.js";

// What a holder that died or stalled leaves behind, and how any instance carries the tree on from there.
// The state is the one a real process leaves (the crash suite, tests/test/crash.int.test.ts, kills real
// processes to reach it); here it is written through the store so the rules can be checked one by one.

const RETENTION_MS = 24 * 3_600_000;

/**
 * Sweeps until the execution is recorded as ended (the app's own sweep may hold the tree a moment). Time
 * goes on meanwhile: now and then the Clock moves a lease's length, so a pass that gave up (its
 * heartbeat, behind a slow store, could not renew before the test Clock's jump) lets its lease lapse.
 */
async function sweepUntilEnded(app: App, clock: TestClock, executionId: string): Promise<void> {
  for (let round = 0; round < 500; round += 1) {
    await app.sweepOnce(RETENTION_MS);
    const record = await app.record(executionId, { tenantId: acme.tenantId });
    if (record?.status === ExecutionStatus.Completed || record?.status === ExecutionStatus.Failed) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
    if (round % 25 === 24) await clock.advance(LEASE_TTL_MS + 1);
  }
}

onEachBackendAndPostgres(OfficeApplication, (test) => {
  test("a dead holder's tree behind a full page of trees live holders still move is recovered: the sweep pages on past them", async ({
    app,
    mockLlm,
    store,
    clock,
  }) => {
    // 100 running trees whose holders are alive (their leases held far into the future), all older.
    for (let i = 0; i < 100; i += 1) {
      const threadId = `t-live-${i}`;
      await store.leases.acquire({
        key: `acme/${threadId}`,
        holder: "live",
        now: clock.now() + 10 * LEASE_TTL_MS,
        ttlMs: LEASE_TTL_MS,
      });
      await store.executions.save({
        tenantId: "acme",
        executionId: `live-${i}`,
        rootExecutionId: `live-${i}`,
        parentExecutionId: undefined,
        threadId,
        workflowName: "office-workflow",
        status: ExecutionStatus.Running,
        startedAt: clock.now() - 10_000,
        updatedAt: clock.now() - 10_000 + i,
        record: {},
      });
    }
    const { pauseId, threadKey } = await pauseRefund(app, mockLlm, "t-behind");
    const { executionId } = await diedAfterTaking(store, clock.now(), pauseId, threadKey);
    await clock.advance(LEASE_TTL_MS + 1);
    await sweepUntilEnded(app, clock, executionId);
    const record = await app.record(executionId, { tenantId: acme.tenantId });
    expect(record?.status).toBe(ExecutionStatus.Completed);
    expect(app.get(Desk).refunds).toHaveLength(1);
  });

  test("paging through running trees too recent to recover, the sweep gives the event loop a turn between pages", async ({
    app,
    store,
    clock,
  }) => {
    // 250 running trees, just updated (inside the sweep's grace): two full pages and a short one, none
    // of them recovered, so nothing but the store is awaited while the sweep pages through them.
    for (let i = 0; i < 250; i += 1) {
      await store.executions.save({
        tenantId: "acme",
        executionId: `recent-${i}`,
        rootExecutionId: `recent-${i}`,
        parentExecutionId: undefined,
        threadId: `t-recent-${i}`,
        workflowName: "office-workflow",
        status: ExecutionStatus.Running,
        startedAt: clock.now(),
        updatedAt: clock.now(),
        record: {},
      });
    }
    let turns = 0;
    let counting = true;
    const count = () => {
      turns += 1;
      if (counting) setImmediate(count);
    };
    setImmediate(count);
    await app.sweepOnce(RETENTION_MS);
    counting = false;
    expect(turns).toBeGreaterThanOrEqual(2);
  });

  test("a tree whose holder died after taking its answer is carried on by the sweep once the lease lapsed: the tool runs once, one finish", async ({
    app,
    mockLlm,
    store,
    clock,
  }) => {
    const { pauseId, threadKey } = await pauseRefund(app, mockLlm, "t-died-taken");
    const { executionId } = await diedAfterTaking(store, clock.now(), pauseId, threadKey);
    const desk = app.get(Desk);
    await app.sweepOnce(RETENTION_MS);
    expect(desk.refunds).toHaveLength(0); // the dead holder's lease still runs: nobody moves the tree
    await clock.advance(LEASE_TTL_MS + 1);
    await sweepUntilEnded(app, clock, executionId);
    const ended = await app.record(executionId, { tenantId: acme.tenantId });
    expect(
      desk.refunds,
      JSON.stringify({ status: ended?.status, error: ended?.error, events: desk.events }),
    ).toHaveLength(1);
    expect(desk.events.filter((e) => e === "finish")).toHaveLength(1);
    const record = await app.record(executionId, { tenantId: acme.tenantId });
    expect(record?.status).toBe(ExecutionStatus.Completed);
    expect(record?.output).toEqual({ text: "Refund handled" });
    const pause = await store.pauses.findByTenantIdAndPauseId(acme.tenantId, pauseId);
    expect(pause?.toolResult).toEqual({ output: { status: "refunded ord_1 (1000)" } });
  });

  test("the sweep carries on as many answered trees of a page at once as the store allows (Postgres 4, SQLite and memory 1), each once", async ({
    app,
    mockLlm,
    store,
    clock,
  }) => {
    const desk = app.get(Desk);
    const executions: string[] = [];
    for (let i = 0; i < 6; i += 1) {
      const { pauseId } = await pauseRefund(app, mockLlm, `t-backlog-${i}`, {
        orderId: `ord_${i}`,
        amountCents: 100,
      });
      // Phase 1 only, as a resumer that died right after recording the answer leaves it.
      const resolved = await store.pauses.resolve(
        acme.tenantId,
        pauseId,
        { decision: { approved: true }, responder: "m-1" },
        clock.now(),
      );
      executions.push(resolved?.rootExecutionId as string);
    }
    // Each refund waits (real time, at most 2 s) until as many run as the store allows, then a little
    // longer, so a run beyond what it allows would be seen: runs that overlap are counted.
    const allowed = Math.min(store.recoveryConcurrency ?? 1, executions.length);
    let running = 0;
    let most = 0;
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    desk.refundGate = async () => {
      running += 1;
      most = Math.max(most, running);
      for (let waited = 0; running < allowed && waited < 2_000; waited += 5) await sleep(5);
      await sleep(50);
      running -= 1;
    };
    await clock.advance(1_001);
    await app.sweepOnce(RETENTION_MS);
    for (const executionId of executions) await sweepUntilEnded(app, clock, executionId);
    expect(most).toBe(allowed);
    expect(desk.refunds.map((r) => r.orderId).sort()).toEqual(executions.map((_, i) => `ord_${i}`));
    for (const executionId of executions) {
      const record = await app.record(executionId, { tenantId: acme.tenantId });
      expect(record?.status).toBe(ExecutionStatus.Completed);
    }
  });

  test("a tree the sweep cannot carry on is logged and its lease let go; the lease was on record all along, so nobody else's is ended", async ({
    app,
    mockLlm,
    store,
    clock,
    logger,
  }) => {
    const { pauseId, threadKey } = await pauseRefund(app, mockLlm, "t-unreadable");
    const resolved = await store.pauses.resolve(
      acme.tenantId,
      pauseId,
      { decision: { approved: true }, responder: "m-1" },
      clock.now(),
    );
    // A record whose start this deployment does not know (a rolling deploy, say): reading the tree fails.
    const stored = await store.executions.findByTenantIdAndExecutionId(
      acme.tenantId,
      resolved?.rootExecutionId as string,
    );
    if (stored === undefined) throw new Error("no execution");
    await store.executions.save({
      ...stored,
      record: { ...(stored.record as object), start: "RetiredStart" },
    });
    // Another instance tries the tree the moment before the sweep lets go of its lease.
    let other: Awaited<ReturnType<typeof store.leases.acquire>> | "not tried" = "not tried";
    const release = store.leases.release.bind(store.leases);
    store.leases.release = async (fence) => {
      if (other === "not tried") {
        other = await store.leases.acquire({
          key: threadKey,
          holder: "other",
          now: clock.now(),
          ttlMs: LEASE_TTL_MS,
        });
      }
      return release(fence);
    };
    await clock.advance(1_001);
    await app.sweepOnce(RETENTION_MS);
    store.leases.release = release;
    expect(logger.entries.filter((e) => e.event === "sweep.recover-failed")).toHaveLength(1);
    // The sweep's lease was committed when it let go, so the other instance was refused, not granted
    // the same epoch only to lose it to the release.
    expect(other).toBeUndefined();
    const after = await store.leases.find(threadKey);
    expect(after === undefined || after.expiresAt <= clock.now()).toBe(true);
    expect(app.get(Desk).refunds).toHaveLength(0);
  });

  test("app.close() waits for a sweep round in flight: the round has settled when close returns", async ({
    app,
    mockLlm,
    store,
    clock,
  }) => {
    const { pauseId } = await pauseRefund(app, mockLlm, "t-closing");
    await store.pauses.resolve(
      acme.tenantId,
      pauseId,
      { decision: { approved: true }, responder: "m-1" },
      clock.now(),
    );
    const desk = app.get(Desk);
    let open = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    let entered = () => {};
    const inTool = new Promise<void>((resolve) => {
      entered = resolve;
    });
    desk.refundGate = async () => {
      entered();
      await gate;
    };
    await clock.advance(1_001);
    let settled = false;
    const round = app.sweepOnce(RETENTION_MS).then(() => {
      settled = true;
    });
    await inTool;
    const opening = setTimeout(open, 100);
    await app.close();
    expect(settled).toBe(true);
    clearTimeout(opening);
    open();
    await round;
  });

  test("a tool result kept on the pause is used on recovery: the tool is not called again", async ({
    app,
    mockLlm,
    store,
    clock,
  }) => {
    const { pauseId, threadKey } = await pauseRefund(app, mockLlm, "t-died-returned");
    const { lease, executionId } = await diedAfterTaking(store, clock.now(), pauseId, threadKey);
    const earlier = { output: { status: "refunded by the first holder" } };
    await store.pauses.saveToolResult(acme.tenantId, pauseId, earlier, lease);
    await clock.advance(LEASE_TTL_MS + 1);
    await sweepUntilEnded(app, clock, executionId);
    expect(app.get(Desk).refunds).toHaveLength(0);
    const record = await app.record(executionId, { tenantId: acme.tenantId });
    expect(record?.status).toBe(ExecutionStatus.Completed);
    const toolStep = record?.steps.find((s) => s.type === "tool");
    expect(toolStep).toMatchObject({ output: earlier.output });
  });

  test("a holder whose heartbeat finds a newer holder aborts its running tool, keeps no result and fires no event; the new holder finishes once", async ({
    app,
    mockLlm,
    mockOf,
    store,
    clock,
  }) => {
    const { pauseId, threadKey, result } = await pauseRefund(app, mockLlm, "t-stalled");
    const tool = holdCarefulTool(app, mockOf(ApprovedRefundTool));
    const { runs } = tool;
    const resuming = app
      .resume({ pauseId, decision: { approved: true } }, { tenantId: acme.tenantId, answeredBy: "m-1" })
      .catch((error: unknown) => error);
    await tool.entered;
    // Another instance took the tree over (this holder looked frozen to it); the next beat finds out.
    const takeover = await store.leases.acquire({
      key: threadKey,
      holder: "other-instance",
      now: clock.now() + LEASE_TTL_MS,
      ttlMs: LEASE_TTL_MS,
    });
    expect(takeover).toBeDefined();
    await clock.advance(LEASE_TTL_MS / 3);
    expect(await resuming).toBeInstanceOf(LeaseLostError);
    for (let i = 0; i < 200 && !runs.includes("aborted"); i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(runs).toEqual([expect.stringMatching(/^start /), "aborted"]);
    const pause = await store.pauses.findByTenantIdAndPauseId(acme.tenantId, pauseId);
    expect(pause?.status).toBe(PauseStatus.Taken);
    expect(pause?.toolResult).toBeUndefined();
    expect(app.get(Desk).events.filter((e) => e === "finish" || e.startsWith("error:"))).toEqual([]);
    const stored = await store.executions.findByTenantIdAndExecutionId(acme.tenantId, result.executionId);
    expect(stored?.status).toBe(ExecutionStatus.Running);

    tool.open();
    await clock.advance(2 * LEASE_TTL_MS);
    await sweepUntilEnded(app, clock, result.executionId);
    const ended = await app.record(result.executionId, { tenantId: acme.tenantId });
    const seen = JSON.stringify({
      runs,
      status: ended?.status,
      error: ended?.error,
      events: app.get(Desk).events,
    });
    expect(runs, seen).toHaveLength(4);
    expect(new Set(runs.filter((r) => r !== "aborted").map((r) => r.split(" ")[1])).size).toBe(1); // one idempotency key throughout
    expect(
      app.get(Desk).events.filter((e) => e === "finish"),
      seen,
    ).toHaveLength(1);
    expect(ended?.status).toBe(ExecutionStatus.Completed);
  });
  test("a tree the sweep listed as running and another pass rested since is left as it is: one onExecutionPause per rest", async ({
    app,
    mockLlm,
    mockOf,
    store,
    clock,
  }) => {
    const { pauseId, result } = await pauseRefund(app, mockLlm, "t-rested-meanwhile", undefined, [
      callTool(ApprovedRefundTool, { orderId: "ord_2", amountCents: 500 }),
      replyWith("Both refunds handled"),
    ]);
    const tool = holdRefundTool(mockOf(ApprovedRefundTool));
    const resuming = app.resume(
      { pauseId, decision: { approved: true } },
      { tenantId: acme.tenantId, answeredBy: "m-1" },
    );
    await tool.entered;
    // Older than the sweep's grace, and its holder's lease still current.
    await clock.advance(2_000);
    const list = store.executions.listByStatus.bind(store.executions);
    let listed = false;
    const page = vi.spyOn(store.executions, "listByStatus").mockImplementationOnce(async (...args) => {
      const rows = await list(...args);
      listed = rows.some((row) => row.executionId === result.executionId);
      // The page lists the tree as running; before the sweep gets to it, the pass rests it again.
      tool.open();
      await resuming;
      return rows;
    });
    try {
      await app.sweepOnce(RETENTION_MS);
    } finally {
      page.mockRestore();
    }
    expect(listed).toBe(true);
    expect((await resuming).status).toBe(ExecutionStatus.Paused);
    expect(app.get(Desk).events.filter((e) => e.startsWith("pause:"))).toEqual(["pause:1", "pause:1"]);
    const stored = await store.executions.findByTenantIdAndExecutionId(acme.tenantId, result.executionId);
    expect(stored?.status).toBe(ExecutionStatus.Paused);
  });

  test("an answered pause the sweep read, which another pass took and rested the tree from before the sweep got the lease, is not moved again", async ({
    app,
    mockLlm,
    store,
    clock,
  }) => {
    const { pauseId, result, threadKey } = await pauseRefund(app, mockLlm, "t-taken-meanwhile", undefined, [
      callTool(ApprovedRefundTool, { orderId: "ord_2", amountCents: 500 }),
      replyWith("Both refunds handled"),
    ]);
    // A live holder has the tree: the answer is recorded, and its resume waits for the lease.
    const live = await store.leases.acquire({
      key: threadKey,
      holder: "live",
      now: clock.now(),
      ttlMs: LEASE_TTL_MS,
    });
    if (live === undefined) throw new Error("not granted");
    const resuming = app.resume(
      { pauseId, decision: { approved: true } },
      { tenantId: acme.tenantId, answeredBy: "m-1" },
    );
    await vi.waitFor(async () =>
      expect((await store.pauses.findByTenantIdAndPauseId(acme.tenantId, pauseId))?.status).toBe(
        PauseStatus.Resolved,
      ),
    );
    await clock.advance(2_000);
    const find = store.pauses.findByTenantIdAndPauseId.bind(store.pauses);
    let readResolved = false;
    const read = vi
      .spyOn(store.pauses, "findByTenantIdAndPauseId")
      .mockImplementationOnce(async (...args) => {
        const pause = await find(...args);
        readResolved = pause?.status === PauseStatus.Resolved;
        // The sweep has read the pause as answered; before it takes the lease, the live holder lets go and
        // the waiting resume takes the pause and rests the tree on the next call's pause.
        await store.leases.release(live);
        await resuming;
        return pause;
      });
    try {
      await app.sweepOnce(RETENTION_MS);
    } finally {
      read.mockRestore();
    }
    expect(readResolved).toBe(true);
    expect((await resuming).status).toBe(ExecutionStatus.Paused);
    expect(app.get(Desk).events.filter((e) => e.startsWith("pause:"))).toEqual(["pause:1", "pause:1"]);
    const stored = await store.executions.findByTenantIdAndExecutionId(acme.tenantId, result.executionId);
    expect(stored?.status).toBe(ExecutionStatus.Paused);
  });

  test("a holder that died after a superstep's writes landed but before its checkpoint did: the sweep applies those writes and goes on (the tool runs once)", async ({
    app,
    mockLlm,
    mockOf,
    store,
    clock,
  }) => {
    const { pauseId, result, threadKey } = await pauseRefund(app, mockLlm, "t-died-between");
    // The holder stops for good right after the tool call's writes are stored: the checkpoint that
    // follows them never lands (as when its process is killed there), nor does anything after it.
    const saver = app.store.checkpointer as unknown as Record<
      "put",
      (...args: unknown[]) => Promise<unknown>
    >;
    const put = saver.put.bind(saver);
    let toolReturned = false;
    let stopped: ((error: Error) => void) | undefined;
    saver.put = (...args: unknown[]) => {
      if (!toolReturned || stopped !== undefined) return put(...args);
      return new Promise((_resolve, reject) => {
        stopped = reject;
      });
    };
    const desk = app.get(Desk);
    mockOf(ApprovedRefundTool).run.mockImplementation(async (input) => {
      desk.refunds.push(input as never);
      toolReturned = true;
      return { status: `refunded ${input.orderId}` };
    });
    await app.answer(
      { pauseId, decision: { approved: true } },
      { tenantId: acme.tenantId, answeredBy: "m-1" },
    );
    await vi.waitFor(() => expect(stopped).toBeDefined());
    saver.put = put;
    // The model turn after the tool may have run in the stopped holder: on recovery it runs again.
    scriptThread(mockLlm, "refund on t-died-between", replyWith("Refund handled"));
    // Its lease is no longer renewed by anyone (taken over and let go here, as a dead holder's lapses).
    const takeover = await store.leases.acquire({
      key: threadKey,
      holder: "after-the-holder-died",
      now: clock.now() + LEASE_TTL_MS + 1,
      ttlMs: LEASE_TTL_MS,
    });
    if (takeover === undefined) throw new Error("the lease was not taken over");
    await store.leases.release(takeover);
    await clock.advance(LEASE_TTL_MS + 1);
    await sweepUntilEnded(app, clock, result.executionId);
    const record = await app.record(result.executionId, { tenantId: acme.tenantId });
    expect(record?.status, JSON.stringify(record?.error)).toBe(ExecutionStatus.Completed);
    expect(record?.output).toEqual({ text: "Refund handled" });
    expect(desk.refunds).toHaveLength(1);
    stopped?.(new Error("the stopped holder's process is gone"));
  });
});

// A renewal that hangs, not one that fails: the lease row is locked by another transaction on the server,
// so the holder's renewal waits on it. On SQLite a lock is waited for inside the call, holding the whole
// process (its clock too), and the memory store never waits: only a server's store can hang this way.
onEachBackend(
  OfficeApplication,
  (test) => {
    test("a holder whose renewal hangs aborts its running tool when its lease expires, keeps no result, and the tree is finished once after", async ({
      app,
      mockLlm,
      mockOf,
      store,
      clock,
    }) => {
      // The expense tool may run for 10 minutes: here it outlives the lease, which nothing renews.
      const { pauseId, threadKey, result } = await pauseExpense(app, mockLlm, "t-hung-renewal");
      const tool = holdCarefulTool(app, mockOf(BookExpenseTool));
      const resuming = app
        .resume({ pauseId, decision: { approved: true } }, { tenantId: acme.tenantId, ownerId: "alice" })
        .catch((error: unknown) => error);
      await tool.entered;
      let unlock = () => {};
      let locked = () => {};
      const isLocked = new Promise<void>((resolve) => {
        locked = resolve;
      });
      const lock = postgresStoreOf(store)
        .db.transaction()
        .execute(async (trx) => {
          await trx
            .selectFrom("agboss_leases")
            .selectAll()
            .where("key", "=", threadKey)
            .forUpdate()
            .execute();
          locked();
          await new Promise<void>((resolve) => {
            unlock = resolve;
          });
        });
      await isLocked;
      try {
        // The next beat's renewal waits on the lock: no answer comes before the lease expires.
        await clock.advance(LEASE_RENEW_MS);
        await clock.advance(LEASE_TTL_MS - LEASE_RENEW_MS - 1);
        expect(tool.runs).toEqual([expect.stringMatching(/^start /)]);
        await clock.advance(1);
        await vi.waitFor(() => expect(tool.runs).toContain("aborted"), { timeout: 2_000 });
        expect(tool.aborted[0]).toBeInstanceOf(LeaseLostError);
        expect(String((tool.aborted[0] as LeaseLostError).cause)).toMatch(
          /no renewal of the lease .* answered before it expired/,
        );
      } finally {
        // Also when the tool was not aborted: the pass, and the test's teardown, wait on the lock.
        tool.open();
        unlock();
        await lock;
      }
      expect(await resuming).toBeInstanceOf(LeaseLostError);
      const pause = await store.pauses.findByTenantIdAndPauseId(acme.tenantId, pauseId);
      expect(pause?.toolResult).toBeUndefined();
      expect(app.get(Desk).events.filter((e) => e === "finish" || e.startsWith("error:"))).toEqual([]);

      await clock.advance(2 * LEASE_TTL_MS);
      await sweepUntilEnded(app, clock, result.executionId);
      const ended = await app.record(result.executionId, { tenantId: acme.tenantId });
      expect(ended?.status).toBe(ExecutionStatus.Completed);
      expect(ended?.output).toEqual({ text: "Expense handled" });
      expect(tool.runs.filter((r) => r.startsWith("effect "))).toHaveLength(1);
      expect(app.get(Desk).events.filter((e) => e === "finish")).toHaveLength(1);
    });
  },
  {},
  [postgresBackend],
);
