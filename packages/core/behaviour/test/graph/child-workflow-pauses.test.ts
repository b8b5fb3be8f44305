import {
  AgentFailedError,
  type ChildExecutionRecord,
  callTool,
  ExecutionStatus,
  NotPausedError,
  PauseResolution,
  PauseStatus,
  replyWith,
} from "@agboss/core";
import type { ModelScript } from "@agboss/testing";
import { expect, vi } from "vitest";
import { onEachBackendAndPostgres } from "../../src/backends.js";
import {
  ApprovedRefundTool,
  BookExpenseTool,
  Desk,
  TestRefundApprovalChannel,
} from "../../src/fixtures/approval-app.js";
import {
  AuditorAgent,
  CaseApplication,
  CaseStart,
  ClerkAgent,
  FanOutStart,
  LeadAgent,
} from "../../src/fixtures/child-app.js";

const manager = { tenantId: "acme", answeredBy: "manager-17" } as const;

/**
 * The fan-out's three children each pause once: desk-work and the nested desk-work book through the
 * clerk, the audit through the auditor; once all are answered the lead answers.
 */
function scriptThreeDesks(
  mockLlm: (agent: typeof ClerkAgent | typeof AuditorAgent | typeof LeadAgent) => ModelScript,
) {
  const booking = callTool(BookExpenseTool, { purpose: "desk lamp", amountCents: 300 });
  mockLlm(ClerkAgent).thenReturn(booking, booking, replyWith("desk done"), replyWith("desk done"));
  mockLlm(AuditorAgent).thenReturn(
    callTool(BookExpenseTool, { purpose: "audit fee", amountCents: 500 }),
    replyWith("audit done"),
  );
  mockLlm(LeadAgent).thenReturn(replyWith("all done"));
}
const owner = { tenantId: "acme", ownerId: "alice" } as const;
const run = { ownerId: "alice", tenant: { tenantId: "acme" } } as const;

onEachBackendAndPostgres(CaseApplication, (test) => {
  test("[PA-05] a pause two children deep is listed in the root's pending with its childExecutionId; resume answers it and the chain finishes", async ({
    app,
    openApp,
    mockLlm,
  }) => {
    mockLlm(ClerkAgent).thenReturn(
      callTool(BookExpenseTool, { purpose: "archive boxes", amountCents: 900 }),
      replyWith("desk done"),
    );
    mockLlm(LeadAgent).thenReturn(replyWith("case closed"));
    const paused = await app.execute(CaseStart, { text: "case 1" }, { ...run, threadId: "t-pa5" });
    expect(paused.status).toBe(ExecutionStatus.Paused);
    expect(paused.pending).toHaveLength(1);
    const pending = paused.pending[0];
    expect(pending?.childExecutionId).toBe(
      `${paused.executionId}/workflow/nested-workflow-start/workflow/desk-work-workflow-start`,
    );
    expect(paused.children).toEqual([]);
    expect(pending?.agent).toBe("clerk-agent");
    const other = await openApp();
    const done = await other.resume(
      { pauseId: pending?.pauseId as string, decision: { approved: true } },
      { ...owner, record: true },
    );
    expect(done).toMatchObject({
      status: ExecutionStatus.Completed,
      executionId: paused.executionId,
      output: { text: "case closed" },
    });
    expect(mockLlm(LeadAgent).calls[0]?.messages.at(-1)?.content).toBe("desk done");
    expect(other.get(Desk).expenses).toEqual([{ purpose: "archive boxes", amountCents: 900 }]);
  });

  test("[AU-03] a child's record lists its own pauses; the root's record keeps the whole tree's", async ({
    app,
    mockLlm,
  }) => {
    scriptThreeDesks(mockLlm);
    const paused = await app.execute(FanOutStart, { text: "three desks" }, { ...run, threadId: "t-au3" });
    expect(paused.pending).toHaveLength(3);
    let done = paused;
    for (const p of paused.pending)
      done = await app.resume(
        { pauseId: p.pauseId as string, decision: { approved: true } },
        { ...owner, record: true },
      );
    expect(done.status).toBe(ExecutionStatus.Completed);
    const record = done.record;
    expect(record?.pauses).toHaveLength(3);
    const children = done.children ?? [];
    expect(children.map((c) => c.workflow.name)).toEqual([
      "desk-work-workflow",
      "desk-work-workflow",
      "desk-work-workflow",
    ]);
    expect(children.map((c) => c.start)).toEqual([
      "desk-work-workflow-start",
      "audit-workflow-start",
      "nested-workflow-start",
    ]);
    // Each child lists only its own steps' pauses; the nested desk-work's pause is in its own child record.
    expect(children.map((c) => c.pauses.length)).toEqual([1, 1, 0]);
    expect(children[2]?.children.map((g) => g.pauses.length)).toEqual([1]);
    for (const child of children) for (const p of child.pauses) expect(p.executionId).toBe(child.executionId);
    expect(record?.children).toEqual(children);
    const stored = await app.record(paused.executionId, { tenantId: "acme" });
    expect(stored?.children?.map((c) => c.pauses.length)).toEqual([1, 1, 0]);
  });

  test("[AU-03] without asking for the record too, the children an output lists carry their own pauses, at a rest and at the end", async ({
    app,
    mockLlm,
  }) => {
    scriptThreeDesks(mockLlm);
    const paused = await app.execute(FanOutStart, { text: "three desks" }, { ...run, threadId: "t-au3b" });
    expect(paused.pending).toHaveLength(3);
    const outputs = [];
    for (const p of paused.pending) {
      outputs.push(await app.resume({ pauseId: p.pauseId as string, decision: { approved: true } }, owner));
    }
    // After the first answer one child has finished (whichever the answer was for: the nested one's
    // pause is its own child's) and the tree rests on the other two.
    const resting = outputs[0];
    expect(resting?.status).toBe(ExecutionStatus.Paused);
    expect(resting?.pending).toHaveLength(2);
    const answeredIn = (child: ChildExecutionRecord): number =>
      child.pauses.length + child.children.reduce((sum, grandchild) => sum + answeredIn(grandchild), 0);
    expect(resting?.children?.map(answeredIn)).toEqual([1]);
    const done = outputs.at(-1);
    expect(done?.status).toBe(ExecutionStatus.Completed);
    expect(done?.record).toBeUndefined();
    expect(done?.children?.map((c) => c.pauses.length)).toEqual([1, 1, 0]);
    expect(done?.children?.[2]?.children.map((g) => g.pauses.length)).toEqual([1]);
  });

  test("[AU-03] resumes that waited for the lease while one of them ended the tree return its children with their pauses too", async ({
    app,
    openApp,
    mockLlm,
    store,
    clock,
  }) => {
    scriptThreeDesks(mockLlm);
    const paused = await app.execute(FanOutStart, { text: "three desks" }, { ...run, threadId: "t-au3c" });
    expect(paused.pending).toHaveLength(3);
    // Another instance holds the tree while the three answers are recorded; once it lets go, the first
    // resume to take the lease runs every answer and ends the tree, and the others find it ended.
    const blocker = await store.leases.acquire({
      key: "acme/t-au3c",
      holder: "another-instance",
      now: clock.now(),
      ttlMs: 30_000,
    });
    const other = await openApp();
    const resumes = paused.pending.map((p, index) =>
      (index === 0 ? other : app).resume(
        { pauseId: p.pauseId as string, decision: { approved: true } },
        owner,
      ),
    );
    await vi.waitFor(async () => {
      const statuses = (await store.pauses.list({ tenantId: "acme", threadId: "t-au3c" })).map(
        (p) => p.status,
      );
      expect(statuses).toEqual([PauseStatus.Resolved, PauseStatus.Resolved, PauseStatus.Resolved]);
    });
    await store.leases.release(blocker as NonNullable<typeof blocker>);
    const results = await Promise.all(resumes);
    for (const result of results) {
      expect(result.status).toBe(ExecutionStatus.Completed);
      expect(result.children?.map((c) => c.pauses.length)).toEqual([1, 1, 0]);
      expect(result.children?.[2]?.children.map((g) => g.pauses.length)).toEqual([1]);
    }
  });

  test("[FW-05] FailFast withdraws a sibling child's pause at any depth and the execution fails in the same call", async ({
    app,
    mockLlm,
    store,
    mockOf,
  }) => {
    const withdraw = mockOf(TestRefundApprovalChannel).withdraw;
    // desk-work (index 0) and the nested desk-work (index 2) both wait on a refund; the audit fails.
    mockLlm(ClerkAgent).thenReturn(
      callTool(ApprovedRefundTool, { orderId: "ord_1", amountCents: 100 }),
      callTool(ApprovedRefundTool, { orderId: "ord_2", amountCents: 200 }),
    );
    mockLlm(AuditorAgent).thenReturn(() => Promise.reject(new Error("audit service down")));
    const error = await app
      .execute(FanOutStart, { text: "three desks" }, { ...run, threadId: "t-fw5" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentFailedError);
    const pauses = await store.pauses.list({ tenantId: "acme", threadId: "t-fw5" });
    expect(pauses).toHaveLength(2);
    for (const p of pauses)
      expect(p).toMatchObject({ status: PauseStatus.Cancelled, resolution: PauseResolution.Withdrawn });
    expect(pauses.some((p) => p.executionId.split("/").length > 3)).toBe(true);
    expect(withdraw).toHaveBeenCalledTimes(2);
    const late = await app
      .resume({ pauseId: pauses[0]?.pauseId as string, decision: { approved: true } }, manager)
      .catch((e: unknown) => e);
    expect(late).toBeInstanceOf(NotPausedError);
  });
});
