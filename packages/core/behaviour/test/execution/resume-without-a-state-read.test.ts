import { callTool, ExecutionStatus, replyWith } from "@agboss/core";
import { LEASE_TTL_MS } from "@agboss/core/internal";
import { expect } from "vitest";
import { onEachBackend, onEachBackendAndPostgres } from "../../src/backends.js";
import { watchingReads } from "../../src/checkpoint-reads.js";
import { diedAfterTaking } from "../../src/dead-holder.js";
import { BookExpenseTool, Desk, OfficeApplication } from "../../src/fixtures/approval-app.js";
import { CaseApplication, CaseStart, ClerkAgent, LeadAgent } from "../../src/fixtures/child-app.js";
import { ReviewApplication, ReviewStart } from "../../src/fixtures/parallel-app.js";
import { acme, pauseRefund, pauseTwo } from "../../src/office.js";
import { scriptTwoPauses } from "../../src/review.js";

// A resume of a tree that rested paused goes on from its checkpoint at once: every interrupted step runs
// again and reads its own pause, so the pass needs no read of the state to know what to resume. Where a
// launch may have to withdraw branches first, the pass reads the state before it moves anything.

const manager = { tenantId: acme.tenantId, answeredBy: "manager-17" } as const;
const owner = { tenantId: acme.tenantId, ownerId: "alice" } as const;

onEachBackendAndPostgres(OfficeApplication, (test) => {
  test("a resume of a tree resting paused invokes its graph without reading the state first", async ({
    app,
    mockLlm,
    store,
  }) => {
    const { pauseId } = await pauseRefund(app, mockLlm, "t-unread");
    const reads = watchingReads(store.checkpointer);
    const resumed = await app.resume({ pauseId, decision: { approved: true } }, manager);
    expect(resumed.status).toBe(ExecutionStatus.Completed);
    expect(app.get(Desk).refunds).toHaveLength(1);
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.filter((read) => read === "state")).toEqual([]);
  });

  test("an answer moved in the background (app.answer) reads no state either", async ({
    app,
    mockLlm,
    store,
  }) => {
    const { pauseId } = await pauseRefund(app, mockLlm, "t-unread-answer");
    const reads = watchingReads(store.checkpointer);
    await app.answer({ pauseId, decision: { approved: true } }, manager);
    await app.idle();
    expect(app.get(Desk).refunds).toHaveLength(1);
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.filter((read) => read === "state")).toEqual([]);
  });

  test("answering one of two pauses of a turn runs its tool only; the other step asks nothing again, and its answer ends the tree", async ({
    app,
    mockLlm,
    store,
  }) => {
    const { refundPauseId, expensePauseId } = await pauseTwo(app, mockLlm, "t-unread-two");
    const asked = app.get(Desk).asked.length;
    const reads = watchingReads(store.checkpointer);
    const first = await app.resume({ pauseId: refundPauseId, decision: { approved: true } }, manager);
    expect(first.status).toBe(ExecutionStatus.Paused);
    expect(first.pending.map((p) => p.pauseId)).toEqual([expensePauseId]);
    expect(app.get(Desk).refunds).toHaveLength(1);
    expect(app.get(Desk).expenses).toHaveLength(0);
    const done = await app.resume({ pauseId: expensePauseId, decision: { approved: true } }, owner);
    expect(done.status).toBe(ExecutionStatus.Completed);
    expect(app.get(Desk).refunds).toHaveLength(1);
    expect(app.get(Desk).expenses).toHaveLength(1);
    expect(app.get(Desk).asked).toHaveLength(asked);
    expect(reads.filter((read) => read === "state")).toEqual([]);
  });

  test("a resume of a tree left running by a holder that died reads the state first, and goes on with the step it cut off", async ({
    app,
    mockLlm,
    store,
    clock,
  }) => {
    const { refundPauseId, expensePauseId, threadKey } = await pauseTwo(app, mockLlm, "t-unread-died");
    // A holder took the refund's answer, marked the tree running and died before the tool ran; its lease
    // has lapsed (taken a lease's length ago: moving the Clock instead would start the app's own sweep).
    await diedAfterTaking(store, clock.now() - LEASE_TTL_MS - 1, refundPauseId, threadKey);
    const reads = watchingReads(store.checkpointer);
    const done = await app.resume({ pauseId: expensePauseId, decision: { approved: true } }, owner);
    expect(done.status).toBe(ExecutionStatus.Completed);
    expect(reads[0]).toBe("state");
    expect(app.get(Desk).refunds).toHaveLength(1);
    expect(app.get(Desk).expenses).toHaveLength(1);
  });
});

onEachBackend(ReviewApplication, (test) => {
  test("a resume of a tree with a parallel launch reads the state first, for the branches to withdraw", async ({
    app,
    mockLlm,
    store,
  }) => {
    scriptTwoPauses(mockLlm as never);
    const paused = await app.execute(
      ReviewStart,
      { text: "case 1" },
      { ...owner, tenant: acme, threadId: "t-launch" },
    );
    const expenseId = paused.pending.find((p) => p.agent === "finance-agent")?.pauseId as string;
    const reads = watchingReads(store.checkpointer);
    const resumed = await app.resume({ pauseId: expenseId, decision: { approved: true } }, owner);
    expect(resumed.status).toBe(ExecutionStatus.Paused);
    expect(reads[0]).toBe("state");
  });
});

onEachBackendAndPostgres(CaseApplication, (test) => {
  test("a pause two child workflows deep is resumed without a state read: each child goes on from its own checkpoint, then the root", async ({
    app,
    mockLlm,
    store,
  }) => {
    mockLlm(ClerkAgent).thenReturn(
      callTool(BookExpenseTool, { purpose: "archive boxes", amountCents: 900 }),
      replyWith("desk done"),
    );
    mockLlm(LeadAgent).thenReturn(replyWith("case closed"));
    const paused = await app.execute(
      CaseStart,
      { text: "case 1" },
      { ...owner, tenant: acme, threadId: "t-unread-child" },
    );
    expect(paused.pending[0]?.childExecutionId).toBeDefined();
    const reads = watchingReads(store.checkpointer);
    const done = await app.resume(
      { pauseId: paused.pending[0]?.pauseId as string, decision: { approved: true } },
      owner,
    );
    expect(done).toMatchObject({ status: ExecutionStatus.Completed, output: { text: "case closed" } });
    expect(app.get(Desk).expenses).toEqual([{ purpose: "archive boxes", amountCents: 900 }]);
    // The root's read and each child's: all of them invoke's.
    expect(reads.length).toBeGreaterThanOrEqual(3);
    expect(reads.filter((read) => read === "state")).toEqual([]);
  });
});
