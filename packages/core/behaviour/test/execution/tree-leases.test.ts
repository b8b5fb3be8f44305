import {
  callTool,
  ExecutionStatus,
  LeaseLostError,
  replyWith,
  StoreUnavailableError,
  ThreadBusyError,
  ToolTimeoutError,
} from "@agboss/core";
import { LEASE_TTL_MS } from "@agboss/core/internal";
import { testWith } from "@agboss/testing";
import { expect, vi } from "vitest";
import {
  onEachBackend,
  onEachBackendAndPostgres,
  postgresBackend,
  sqliteBackend,
} from "../../src/backends.js";
import { diedAfterTaking } from "../../src/dead-holder.js";
import {
  ApprovedRefundTool,
  Desk,
  OfficeApplication,
  OfficeWorkflowStart,
} from "../../src/fixtures/approval-app.js";
import {
  RefundAgent,
  RefundApplication,
  RefundCardTool,
  RefundWorkflowStart,
} from "../../src/fixtures/refund-app.js";
import { acme, holdCarefulTool, pauseRefund } from "../../src/office.js";

// Each call that moves a tree holds its lease under its own holder id: the sweep, or another call of
// the same app, meets a held lease exactly as another instance would. (With one id for the whole app,
// the store granted the same holder a new epoch, and the first call failed with LeaseLostError.)

const run = { ownerId: "alice", tenant: { tenantId: "acme" } } as const;

onEachBackend(RefundApplication, (test) => {
  test("the sweep of the same app steps aside while one of its calls moves the tree: the tool runs once and the call completes", async ({
    app,
    mockLlm,
    mockOf,
  }) => {
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered = () => {};
    const inTool = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const tool = mockOf(RefundCardTool).run;
    tool.mockImplementation(async () => {
      entered();
      await gate;
      return { status: "refunded ord_5" };
    });
    mockLlm(RefundAgent).thenReturn(
      callTool(RefundCardTool, { orderId: "ord_5", amountCents: 500 }),
      replyWith("Refunded ord_5"),
    );
    const executing = app.execute(
      RefundWorkflowStart,
      { text: "refund ord_5" },
      { ...run, threadId: "t-own" },
    );
    await inTool;
    await app.sweepOnce(24 * 3_600_000);
    const second = await app
      .execute(RefundWorkflowStart, { text: "again" }, { ...run, threadId: "t-own" })
      .catch((e: unknown) => e);
    expect(second).toBeInstanceOf(ThreadBusyError);
    release();
    const done = await executing;
    expect(done.status).toBe(ExecutionStatus.Completed);
    expect(done.output).toEqual({ text: "Refunded ord_5" });
    expect(tool).toHaveBeenCalledTimes(1);
  });
});

const leaseTest = testWith(OfficeApplication);
leaseTest(
  "[HW-05] a pass holds the tree's 30 s lease; an execution that paused holds none",
  async ({ app, mockLlm, store, clock, mockOf }) => {
    let during: number | undefined;
    const { TestRefundApprovalChannel } = await import("../../src/fixtures/approval-app.js");
    const { ChannelOutcome } = await import("@agboss/core");
    mockOf(TestRefundApprovalChannel).send.mockImplementation(async () => {
      const lease = await store.leases.find("acme/t-lease");
      during = (lease?.expiresAt ?? 0) - clock.now();
      return ChannelOutcome.awaitReply();
    });
    const { result } = await pauseRefund(app, mockLlm, "t-lease");
    expect(during).toBe(30_000);
    expect(result.status).toBe(ExecutionStatus.Paused);
    const after = await store.leases.find("acme/t-lease");
    expect(after === undefined || after.expiresAt <= clock.now()).toBe(true);
  },
);

// The lease's watchdog (it aborts a pass whose lease expires with no renewal answered) under the testing
// kit's clock, which moves in jumps: a renewal is given its time to answer, as time passing would.
onEachBackendAndPostgres(OfficeApplication, (test) => {
  test("a renewal slower than the test clock's jump still answers before the lease's expiry: a tool past its 30 s timeout is cut off by its timeout, not by a lost lease", async ({
    app,
    mockLlm,
    mockOf,
    store,
    clock,
  }) => {
    const { pauseId } = await pauseRefund(app, mockLlm, "t-slow-renewal");
    const renew = store.leases.renew.bind(store.leases);
    // A database that takes 50 ms of real time to answer a renewal.
    const slow = vi.spyOn(store.leases, "renew").mockImplementation(async (args) => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      return renew(args);
    });
    try {
      const tool = holdCarefulTool(app, mockOf(ApprovedRefundTool));
      const resuming = app.resume(
        { pauseId, decision: { approved: true } },
        { tenantId: acme.tenantId, answeredBy: "m-1" },
      );
      await tool.entered;
      await clock.advance(LEASE_TTL_MS + 1_000);
      await vi.waitFor(() => expect(tool.aborted).toHaveLength(1));
      expect(tool.aborted[0]).toBeInstanceOf(ToolTimeoutError);
      expect((await resuming).status).toBe(ExecutionStatus.Completed);
    } finally {
      slow.mockRestore();
    }
  });

  test("a pass that begins with its lease lapsed (an onExecutionResume that took longer than the lease) renews it at once and goes on", async ({
    app,
    mockLlm,
    mockOf,
    clock,
  }) => {
    const { pauseId } = await pauseRefund(app, mockLlm, "t-late-pass");
    const desk = app.get(Desk);
    let open = () => {};
    let entered = () => {};
    const inHandler = new Promise<void>((resolve) => {
      entered = resolve;
    });
    desk.resumeGate = () =>
      new Promise<void>((resolve) => {
        entered();
        open = resolve;
      });
    const tool = holdCarefulTool(app, mockOf(ApprovedRefundTool));
    const resuming = app.resume(
      { pauseId, decision: { approved: true } },
      { tenantId: acme.tenantId, answeredBy: "m-1" },
    );
    await inHandler;
    desk.resumeGate = undefined;
    // The handler takes 31 s: the lease taken before it has lapsed (nobody took it) when the pass begins.
    clock.set(clock.now() + LEASE_TTL_MS + 1_000);
    open();
    await tool.entered;
    await clock.advance(0);
    await clock.advance(5_000);
    expect(tool.aborted).toEqual([]);
    tool.open();
    const done = await resuming;
    expect(done.status).toBe(ExecutionStatus.Completed);
    expect(tool.runs.filter((r) => r.startsWith("effect "))).toHaveLength(1);
    expect(tool.aborted.some((reason) => reason instanceof LeaseLostError)).toBe(false);
  });
});

// The SQL stores only: there a start refused under its lease rolls the grant back, and another holder
// may then be granted the same epoch; the memory store keeps the refused start's grant until it is let go.
onEachBackend(
  OfficeApplication,
  (test) => {
    test("a start refused under its lease lets go only of its own grant: another instance granted the same epoch after the rollback keeps its lease", async ({
      app,
      mockLlm,
      store,
      clock,
    }) => {
      const { threadKey } = await pauseRefund(app, mockLlm, "t-refused-start");
      const atomically = store.atomically.bind(store);
      let other: Awaited<ReturnType<typeof store.leases.acquire>>;
      // Between the refused start's rollback and its cleanup, another instance takes the free lease.
      const unit = vi.spyOn(store, "atomically").mockImplementationOnce((work) =>
        atomically(work).catch(async (error: unknown) => {
          other = await store.leases.acquire({
            key: threadKey,
            holder: "other-instance",
            now: clock.now(),
            ttlMs: LEASE_TTL_MS,
          });
          throw error;
        }),
      );
      const refused = await app
        .execute(
          OfficeWorkflowStart,
          { text: "one more" },
          { threadId: "t-refused-start", ownerId: "alice", tenant: acme },
        )
        .catch((error: unknown) => error);
      unit.mockRestore();
      expect(refused).toBeInstanceOf(ThreadBusyError);
      expect(other?.holder).toBe("other-instance");
      const held = await store.leases.find(threadKey);
      expect(held).toMatchObject({ holder: "other-instance", epoch: other?.epoch });
      expect(held?.expiresAt).toBeGreaterThan(clock.now());
    });
  },
  {},
  [sqliteBackend, postgresBackend],
);

// On Postgres the sweep reads the tree's state through the checkpointer before it runs anything.
onEachBackend(
  OfficeApplication,
  (test) => {
    test("a pass the store fails before its graph ran lets its lease go at once, as nothing of it can still run", async ({
      app,
      mockLlm,
      store,
      clock,
    }) => {
      const { pauseId, threadKey } = await pauseRefund(app, mockLlm, "t-fault-before-run");
      // A holder took the answer and died: the sweep carries the tree on, reading its state first.
      await diedAfterTaking(store, clock.now(), pauseId, threadKey);
      await clock.advance(LEASE_TTL_MS + 1);
      const read = vi
        .spyOn(store.checkpointer, "getTuple")
        .mockImplementation(() => Promise.reject(new StoreUnavailableError("the database went away")));
      await app.sweepOnce(24 * 3_600_000);
      expect(read).toHaveBeenCalled();
      read.mockRestore();
      const lease = await store.leases.find(threadKey);
      expect(lease?.holder).not.toBe("dead");
      expect(lease === undefined || lease.expiresAt <= clock.now()).toBe(true);
    });
  },
  {},
  [postgresBackend],
);
