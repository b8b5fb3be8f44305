import { setTimeout as wait } from "node:timers/promises";
import {
  type App,
  callTool,
  days,
  ExecutionStatus,
  type ExecutionStreamEvent,
  type FollowTarget,
  replyWith,
} from "@agboss/core";
import type { ModelScript } from "@agboss/testing";
import { expect } from "vitest";
import { onEachBackend } from "../../src/backends.js";
import { ApprovedRefundTool, BookExpenseTool } from "../../src/fixtures/approval-app.js";
import {
  BuyTool,
  PurchaseAgent,
  PurchaseApplication,
  PurchaseDesk,
  PurchaseWorkflowStart,
} from "../../src/fixtures/deadline-app.js";
import {
  AlphaReviewer,
  BetaReviewer,
  GammaReviewer,
  QuorumApplication,
  QuorumStart,
  TallyAgent,
} from "../../src/fixtures/quorum-app.js";

// Withdrawals made outside a step (a deadline's escalation, a quorum that was decided) reach the
// followers of the tree in this process as pause.withdrawn, without a read of the store.

/** A poll interval no test reaches: after its first read, such a follow hears only this process's bus. */
const NEVER_MS = days(30).milliseconds;
const acme = { tenantId: "acme" } as const;

function followInBackground(app: App, target: FollowTarget) {
  const events: ExecutionStreamEvent[] = [];
  let ended = false;
  const done = (async () => {
    try {
      for await (const event of app.follow(target, { tenantId: acme.tenantId, pollIntervalMs: NEVER_MS })) {
        events.push(event);
      }
    } finally {
      ended = true;
    }
  })();
  done.catch(() => undefined);
  return { events, done, types: () => events.map((e) => e.type), ended: () => ended };
}

async function until(what: () => boolean): Promise<void> {
  for (let turn = 0; turn < 300 && !what(); turn += 1) await wait(10);
  expect(what()).toBe(true);
}

type Mock = (c: unknown) => ModelScript;

onEachBackend(PurchaseApplication, (test) => {
  test("a deadline's escalation is heard by the tree's followers: the clerk's question withdrawn, the manager's asked, then the end", async ({
    app,
    mockLlm,
    clock,
  }) => {
    const text = "purchase on t-follow-escalate";
    mockLlm(PurchaseAgent)
      .when((request) => request.messages.find((m) => m.role === "user")?.content === text)
      .thenReturn(callTool(BuyTool, { item: "toaster", amountCents: 4_000 }), replyWith("Done"));
    const t0 = clock.now();
    const paused = await app.execute(
      PurchaseWorkflowStart,
      { text },
      { threadId: "t-follow-escalate", ownerId: "alice", tenant: acme },
    );
    expect(paused.status).toBe(ExecutionStatus.Paused);
    const follow = followInBackground(app, { threadId: "t-follow-escalate" });
    await until(() => follow.types().includes("execution.paused"));

    // Two days on, the sweep escalates the clerk's question and carries the tree on to ask the manager.
    clock.set(t0 + days(2).milliseconds);
    await clock.advance(30_000);
    const desk = app.get(PurchaseDesk);
    await until(
      () => desk.asked.some((a) => a.role === "manager") && count(follow.types(), "execution.paused") === 2,
    );
    await app.resume(
      { pauseId: desk.pauseOf("manager"), decision: { approved: true } },
      { tenantId: "acme", answeredBy: "manager-17" },
    );
    await until(follow.ended);

    const pauses = follow.events.filter((e) => e.type.startsWith("pause."));
    expect(pauses.map((e) => [e.type, (e as { role?: string }).role])).toEqual([
      ["pause.asked", "purchase-clerk-approval-channel"],
      ["pause.withdrawn", undefined],
      ["pause.asked", "purchase-manager-approval-channel"],
      ["pause.answered", undefined],
    ]);
    expect(follow.types().at(-1)).toBe("execution.finished");
  });
});

function count(types: readonly string[], type: string): number {
  return types.filter((t) => t === type).length;
}

onEachBackend(QuorumApplication, (test) => {
  test("a quorum decided by an answer withdraws the branch still waiting, and its followers hear it once", async ({
    app,
    mockLlm,
  }) => {
    (mockLlm as Mock)(AlphaReviewer).thenReturn(
      callTool(ApprovedRefundTool, { orderId: "ord_1", amountCents: 100 }),
      replyWith("approve"),
    );
    mockLlm(BetaReviewer).thenReturn(replyWith("approve"));
    (mockLlm as Mock)(GammaReviewer).thenReturn(
      callTool(BookExpenseTool, { purpose: "audit", amountCents: 200 }),
      replyWith("approve: booked"),
    );
    mockLlm(TallyAgent).thenReturn(replyWith("tallied"));
    const paused = await app.execute(
      QuorumStart,
      { text: "case follow" },
      { ownerId: "alice", tenant: acme, threadId: "t-follow-quorum" },
    );
    expect(paused.status).toBe(ExecutionStatus.Paused);
    const expenseId = paused.pending.find((p) => p.agent === "gamma-reviewer-agent")?.pauseId as string;
    const follow = followInBackground(app, { executionId: paused.executionId });
    await until(() => follow.types().includes("execution.paused"));

    await app.resume(
      { pauseId: expenseId, decision: { approved: true } },
      { tenantId: "acme", ownerId: "alice" },
    );
    await until(follow.ended);

    const byAgent = (type: string) =>
      follow.events.filter((e) => e.type === type).map((e) => (e as { agent: string }).agent);
    expect(byAgent("pause.asked").sort()).toEqual(["alpha-reviewer-agent", "gamma-reviewer-agent"]);
    expect(byAgent("pause.answered")).toEqual(["gamma-reviewer-agent"]);
    expect(byAgent("pause.withdrawn")).toEqual(["alpha-reviewer-agent"]);
    expect(follow.types().at(-1)).toBe("execution.finished");
  });
});
