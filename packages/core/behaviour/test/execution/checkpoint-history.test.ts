import { callTool, ExecutionStatus, replyWith, type Store } from "@agboss/core";
import { expect } from "vitest";
import { onEachBackend, postgresBackend, sqliteBackend } from "../../src/backends.js";
import { BookExpenseTool, Desk } from "../../src/fixtures/approval-app.js";
import { CaseApplication, CaseStart, ClerkAgent, LeadAgent } from "../../src/fixtures/child-app.js";
import { ReviewApplication, ReviewStart } from "../../src/fixtures/parallel-app.js";
import { scriptTwoPauses } from "../../src/review.js";

// The database stores keep only the latest checkpoint of each of a tree's namespaces (its own graph's, each
// parallel branch's and each child workflow's): a rested tree takes the same room whatever it went
// through, and it goes on from there, on this instance or another.

const manager = { tenantId: "acme", answeredBy: "manager-17" } as const;
const owner = { tenantId: "acme", ownerId: "alice" } as const;
const run = { ownerId: "alice", tenant: { tenantId: "acme" } } as const;

/** How many checkpoints each namespace of the tree on `threadId` keeps. */
async function checkpointsByNamespace(store: Store, threadId: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for await (const tuple of store.checkpointer.list({ configurable: { thread_id: `acme/${threadId}` } })) {
    const namespace = String(tuple.config.configurable?.checkpoint_ns ?? "");
    counts.set(namespace, (counts.get(namespace) ?? 0) + 1);
  }
  return counts;
}

function expectLatestOnly(counts: Map<string, number>, namespaces: number) {
  expect(counts.size).toBeGreaterThanOrEqual(namespaces);
  expect(
    [...counts.values()].every((n) => n === 1),
    JSON.stringify([...counts]),
  ).toBe(true);
}

onEachBackend(
  ReviewApplication,
  (test) => {
    test("a tree paused in two parallel branches keeps one checkpoint per namespace, and resumes from them", async ({
      app,
      openApp,
      mockLlm,
      store,
    }) => {
      scriptTwoPauses(mockLlm as never, replyWith("summary"));
      const paused = await app.execute(ReviewStart, { text: "case 1" }, { ...run, threadId: "t-h1" });
      expect(paused.status).toBe(ExecutionStatus.Paused);
      // The flow's own namespace and one per branch that ran (legal, finance, ops).
      expectLatestOnly(await checkpointsByNamespace(store, "t-h1"), 4);

      const expenseId = paused.pending.find((p) => p.agent === "finance-agent")?.pauseId as string;
      const refundId = app.get(Desk).asked.find((a) => a.channel === "refund")?.pauseId as string;
      const other = await openApp();
      const first = await other.resume({ pauseId: expenseId, decision: { approved: true } }, owner);
      expect(first.status).toBe(ExecutionStatus.Paused);
      expectLatestOnly(await checkpointsByNamespace(store, "t-h1"), 4);
      const done = await app.resume({ pauseId: refundId, decision: { approved: true } }, manager);
      expect(done).toMatchObject({ status: ExecutionStatus.Completed, output: { text: "summary" } });
      expectLatestOnly(await checkpointsByNamespace(store, "t-h1"), 4);
      expect([...app.get(Desk).refunds, ...other.get(Desk).refunds]).toHaveLength(1);
      expect([...app.get(Desk).expenses, ...other.get(Desk).expenses]).toHaveLength(1);
    });
  },
  {},
  [sqliteBackend, postgresBackend],
);

onEachBackend(
  CaseApplication,
  (test) => {
    test("a tree paused two child workflows deep keeps one checkpoint per namespace, and resumes from them", async ({
      app,
      openApp,
      mockLlm,
      store,
    }) => {
      mockLlm(ClerkAgent).thenReturn(
        callTool(BookExpenseTool, { purpose: "archive boxes", amountCents: 900 }),
        replyWith("desk done"),
      );
      mockLlm(LeadAgent).thenReturn(replyWith("case closed"));
      const paused = await app.execute(CaseStart, { text: "case 1" }, { ...run, threadId: "t-h2" });
      expect(paused.status).toBe(ExecutionStatus.Paused);
      // The root's namespace and the two children's.
      expectLatestOnly(await checkpointsByNamespace(store, "t-h2"), 3);
      const other = await openApp();
      const done = await other.resume(
        { pauseId: paused.pending[0]?.pauseId as string, decision: { approved: true } },
        owner,
      );
      expect(done).toMatchObject({ status: ExecutionStatus.Completed, output: { text: "case closed" } });
      expectLatestOnly(await checkpointsByNamespace(store, "t-h2"), 3);
      expect(other.get(Desk).expenses).toEqual([{ purpose: "archive boxes", amountCents: 900 }]);
    });
  },
  {},
  [sqliteBackend, postgresBackend],
);
