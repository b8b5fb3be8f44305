import {
  ChannelOutcome,
  callTool,
  ExecutionStatus,
  NotPausedError,
  PauseStatus,
  replyWith,
  ThreadBusyError,
} from "@agboss/core";
import { expect, vi } from "vitest";
import {
  memoryBackend,
  onEachBackend,
  onEachBackendAndPostgres,
  postgresBackend,
} from "../../src/backends.js";
import {
  ApprovedRefundTool,
  Desk,
  OfficeAgent,
  OfficeApplication,
  OfficeWorkflowStart,
  TestRefundApprovalChannel,
} from "../../src/fixtures/approval-app.js";
import { acme, pauseRefund, pauseTwo } from "../../src/office.js";

const manager = { tenantId: "acme", answeredBy: "manager-17" } as const;
const owner = { tenantId: "acme", ownerId: "alice" } as const;

onEachBackendAndPostgres(OfficeApplication, (test) => {
  test("[CC-01] phase 1 is atomic: of two resumes of one pause, one records it and the other is NotPausedError; the tool runs once", async ({
    app,
    openApp,
    mockLlm,
  }) => {
    const { pauseId } = await pauseRefund(app, mockLlm, "t-cc1");
    const other = await openApp();
    const outcomes = await Promise.allSettled([
      app.resume({ pauseId, decision: { approved: true } }, manager),
      other.resume(
        { pauseId, decision: { approved: false } },
        { tenantId: "acme", answeredBy: "manager-18" },
      ),
    ]);
    const rejected = outcomes.filter((o) => o.status === "rejected");
    expect(rejected).toHaveLength(1);
    expect((rejected[0] as PromiseRejectedResult).reason).toBeInstanceOf(NotPausedError);
    const refunds = [...app.get(Desk).refunds, ...other.get(Desk).refunds];
    const fulfilled = outcomes.find((o) => o.status === "fulfilled") as PromiseFulfilledResult<{
      status: string;
    }>;
    expect(fulfilled.value.status).toBe(ExecutionStatus.Completed);
    const approvedWon = outcomes[0]?.status === "fulfilled";
    expect(refunds).toHaveLength(approvedWon ? 1 : 0);
  });

  test("[CC-02] phase 2 continues every resolved pause of the tree in one pass, and drains the ones resolved while it ran", async ({
    app,
    openApp,
    mockLlm,
    store,
    clock,
    mockOf,
  }) => {
    const { refundPauseId, expensePauseId, threadKey } = await pauseTwo(app, mockLlm, "t-cc2");
    const blocker = await store.leases.acquire({
      key: threadKey,
      holder: "another-instance",
      now: clock.now(),
      ttlMs: 30_000,
    });
    const other = await openApp();
    const first = other.resume({ pauseId: refundPauseId, decision: { approved: true } }, manager);
    const second = app.resume({ pauseId: expensePauseId, decision: { approved: true } }, owner);
    await vi.waitFor(async () => {
      const statuses = (await store.pauses.list({ tenantId: "acme", threadId: "t-cc2" })).map(
        (p) => p.status,
      );
      expect(statuses).toEqual([PauseStatus.Resolved, PauseStatus.Resolved]);
    });
    const modelCalls = mockLlm(OfficeAgent).calls.length;
    await store.leases.release(blocker as NonNullable<typeof blocker>);
    const [a, b] = await Promise.all([first, second]);
    expect([a.status, b.status]).toEqual([ExecutionStatus.Completed, ExecutionStatus.Completed]);
    expect(b.output).toEqual(a.output);
    // One pass took both answers: the model answered once more, not twice.
    expect(mockLlm(OfficeAgent).calls.length).toBe(modelCalls + 1);

    // The drain: a decision recorded while a pass runs is taken before the tree rests.
    const drained = await pauseTwo(app, mockLlm, "t-cc2-drain");
    const tool = mockOf(ApprovedRefundTool);
    tool.run.mockImplementationOnce(async (input) => {
      await store.pauses.resolve(
        "acme",
        drained.expensePauseId,
        { decision: { approved: true }, responder: "alice" },
        clock.now(),
      );
      return { status: `refunded ${input.orderId}` };
    });
    const result = await app.resume(
      { pauseId: drained.refundPauseId, decision: { approved: true } },
      manager,
    );
    expect(result.status).toBe(ExecutionStatus.Completed);
    expect(result.pending).toEqual([]);
  });

  test("[CC-03] a resume that finds the lease held waits; when the holder's lease lapses it takes it and goes on", async ({
    app,
    mockLlm,
    store,
    clock,
  }) => {
    const { pauseId, threadKey } = await pauseRefund(app, mockLlm, "t-cc3");
    await store.leases.acquire({
      key: threadKey,
      holder: "a-holder-that-died",
      now: clock.now(),
      ttlMs: 30_000,
    });
    const resuming = app.resume({ pauseId, decision: { approved: true } }, manager);
    await vi.waitFor(async () =>
      expect((await store.pauses.findByTenantIdAndPauseId("acme", pauseId))?.status).toBe(
        PauseStatus.Resolved,
      ),
    );
    await clock.advance(29_000);
    let settled = false;
    void resuming.then(() => {
      settled = true;
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(settled).toBe(false);
    await clock.advance(1_000);
    const result = await resuming;
    expect(result.status).toBe(ExecutionStatus.Completed);
    expect(result.output).toEqual({ text: "Refund handled" });
  });

  test("[CC-04] an answer that lands while the channel's send is still running is taken at once: the call does not pause", async ({
    app,
    openApp,
    mockLlm,
    mockOf,
    store,
  }) => {
    const other = await openApp();
    let webhook: Promise<unknown> | undefined;
    mockOf(TestRefundApprovalChannel).send.mockImplementationOnce(async (ask) => {
      webhook = other.resume({ pauseId: ask.pauseId, decision: { approved: true } }, manager);
      await vi.waitFor(async () =>
        expect((await store.pauses.findByTenantIdAndPauseId("acme", ask.pauseId))?.status).toBe(
          PauseStatus.Resolved,
        ),
      );
      return ChannelOutcome.awaitReply();
    });
    const { result } = await pauseRefund(app, mockLlm, "t-cc4");
    expect(result.status).toBe(ExecutionStatus.Completed);
    expect(result.pending).toEqual([]);
    expect(app.get(Desk).refunds).toHaveLength(1);
    await expect(webhook).resolves.toMatchObject({ status: ExecutionStatus.Completed });
  });

  test("[CC-05] a tree whose holder died after recording a decision is picked up by the sweep, which takes the resolved pause", async ({
    app,
    mockLlm,
    store,
    clock,
  }) => {
    const { pauseId, result } = await pauseRefund(app, mockLlm, "t-cc5");
    // Phase 1 landed, then the process died before phase 2.
    await store.pauses.resolve(
      "acme",
      pauseId,
      { decision: { approved: true }, responder: "manager-17" },
      clock.now(),
    );
    await clock.advance(30_000);
    await vi.waitFor(async () =>
      expect((await app.record(result.executionId, { tenantId: "acme" }))?.status).toBe(
        ExecutionStatus.Completed,
      ),
    );
    expect(app.get(Desk).refunds).toHaveLength(1);
    expect((await store.pauses.findByTenantIdAndPauseId("acme", pauseId))?.status).toBe(PauseStatus.Taken);
  });

  test("the sweep leaves alone an answer recorded less than a second ago (its resumer is about to move it) and takes it after", async ({
    app,
    mockLlm,
    store,
    clock,
  }) => {
    const { pauseId, result } = await pauseRefund(app, mockLlm, "t-cc5-grace");
    await store.pauses.resolve(
      "acme",
      pauseId,
      { decision: { approved: true }, responder: "manager-17" },
      clock.now(),
    );
    await app.sweepOnce(24 * 3_600_000);
    expect((await store.pauses.findByTenantIdAndPauseId("acme", pauseId))?.status).toBe(PauseStatus.Resolved);
    expect(app.get(Desk).refunds).toHaveLength(0);
    clock.set(clock.now() + 1_001);
    await app.sweepOnce(24 * 3_600_000);
    expect((await store.pauses.findByTenantIdAndPauseId("acme", pauseId))?.status).toBe(PauseStatus.Taken);
    expect((await app.record(result.executionId, { tenantId: "acme" }))?.status).toBe(
      ExecutionStatus.Completed,
    );
    expect(app.get(Desk).refunds).toHaveLength(1);
  });

  test("[CC-06] two instances answer two pauses of one tree at once: both decisions are taken, each tool runs once", async ({
    app,
    openApp,
    mockLlm,
  }) => {
    const { refundPauseId, expensePauseId } = await pauseTwo(app, mockLlm, "t-cc6");
    const other = await openApp();
    const [a, b] = await Promise.all([
      app.resume({ pauseId: refundPauseId, decision: { approved: true } }, manager),
      other.resume({ pauseId: expensePauseId, decision: { approved: true } }, owner),
    ]);
    const statuses = [a.status, b.status];
    expect(statuses).toContain(ExecutionStatus.Completed);
    const refunds = [...app.get(Desk).refunds, ...other.get(Desk).refunds];
    const expenses = [...app.get(Desk).expenses, ...other.get(Desk).expenses];
    expect([refunds.length, expenses.length]).toEqual([1, 1]);
    const final = await app.record(a.executionId, { tenantId: "acme" });
    expect(final?.status).toBe(ExecutionStatus.Completed);
  });
});

onEachBackendAndPostgres(OfficeApplication, (test) => {
  test("a resume that waited for the lease after the holder finished the tree reports it without finishing it again", async ({
    app,
    openApp,
    mockLlm,
    store,
    clock,
  }) => {
    const { refundPauseId, expensePauseId, threadKey } = await pauseTwo(app, mockLlm, "t-once");
    const blocker = await store.leases.acquire({
      key: threadKey,
      holder: "another-instance",
      now: clock.now(),
      ttlMs: 30_000,
    });
    const other = await openApp();
    const a = other.resume({ pauseId: refundPauseId, decision: { approved: true } }, manager);
    const b = app.resume({ pauseId: expensePauseId, decision: { approved: true } }, owner);
    await vi.waitFor(async () => {
      const statuses = (await store.pauses.list({ tenantId: "acme", threadId: "t-once" })).map(
        (p) => p.status,
      );
      expect(statuses).toEqual([PauseStatus.Resolved, PauseStatus.Resolved]);
    });
    await store.leases.release(blocker as NonNullable<typeof blocker>);
    const results = await Promise.all([a, b]);
    expect(results.map((r) => r.status)).toEqual([ExecutionStatus.Completed, ExecutionStatus.Completed]);
    const finishes = [...app.get(Desk).events, ...other.get(Desk).events].filter((e) => e === "finish");
    expect(finishes).toHaveLength(1);
  });
});

// Not on SQLite in one process: there the waiting resume's next try is queued behind the release in the
// store's one writer queue, so nothing gets in between. Across processes sharing a file it can, as on
// Postgres; the code under test is the runtime's, the same on every store.
onEachBackend(
  OfficeApplication,
  (test) => {
    test("a resume that waited for the lease while its tree ended and the thread's next execution ran (to its end, or to a pause) reports its own execution's end, not the next one's, and leaves its record completed", async ({
      app,
      openApp,
      mockLlm,
      store,
      clock,
    }) => {
      const other = await openApp();
      const nextTurns = {
        ends: [replyWith("The next one is done")],
        pauses: [callTool(ApprovedRefundTool, { orderId: "ord_2", amountCents: 200 })],
      } as const;
      const raced = { ends: 0, pauses: 0 };
      // The next execution must take the lease between the end of the tree and the waiting resume's next
      // try (it tries every few milliseconds): each kind is tried on fresh threads until that happened.
      for (const kind of ["ends", "pauses"] as const) {
        for (let attempt = 0; attempt < 8 && raced[kind] === 0; attempt++) {
          const threadId = `t-moved-${kind}-${attempt}`;
          const {
            result: first,
            refundPauseId,
            expensePauseId,
            threadKey,
          } = await pauseTwo(app, mockLlm, threadId);
          const next = `and one more thing on ${threadId}`;
          mockLlm(OfficeAgent)
            .when((request) => request.messages.at(-1)?.content === next)
            .thenReturn(...nextTurns[kind]);
          const blocker = await store.leases.acquire({
            key: threadKey,
            holder: "another-instance",
            now: clock.now(),
            ttlMs: 30_000,
          });
          const a = other.resume({ pauseId: refundPauseId, decision: { approved: true } }, manager);
          const b = app.resume({ pauseId: expensePauseId, decision: { approved: true } }, owner);
          await vi.waitFor(async () => {
            const statuses = (await store.pauses.list({ tenantId: "acme", threadId })).map((p) => p.status);
            expect(statuses).toEqual([PauseStatus.Resolved, PauseStatus.Resolved]);
          });
          await store.leases.release(blocker as NonNullable<typeof blocker>);
          // One of them takes the lease and ends the tree (taking both answers); the other still waits.
          await Promise.race([a, b]);
          const started = await app
            .execute(OfficeWorkflowStart, { text: next }, { threadId, ownerId: "alice", tenant: acme })
            .catch((error: unknown) => error);
          if (started instanceof ThreadBusyError) {
            await Promise.all([a, b]);
            continue;
          }
          raced[kind] += 1;
          expect(started).toMatchObject(
            kind === "ends"
              ? { status: ExecutionStatus.Completed, output: { text: "The next one is done" } }
              : { status: ExecutionStatus.Paused },
          );
          const results = await Promise.all([a, b]);
          for (const result of results) {
            expect(result).toMatchObject({
              status: ExecutionStatus.Completed,
              executionId: first.executionId,
              output: { text: "Both done" },
            });
          }
          expect((await app.record(first.executionId, acme))?.status).toBe(ExecutionStatus.Completed);
        }
      }
      expect(raced).toEqual({ ends: 1, pauses: 1 });
    });
  },
  {},
  [memoryBackend, postgresBackend],
);
