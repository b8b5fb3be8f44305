import { callTool, ExecutionStatus, replyWith } from "@agboss/core";
import { KEEP_READ_CONFIG_KEY, KEPT_READ_CONFIG_KEY, type ReadsAhead } from "@agboss/core/store";
import { expect } from "vitest";
import { onEachBackend, postgresBackend } from "../../src/backends.js";
import { BookExpenseTool, Desk, OfficeApplication } from "../../src/fixtures/approval-app.js";
import {
  FinanceAgent,
  LegalAgent,
  OpsAgent,
  ReviewApplication,
  ReviewStart,
  SummaryAgent,
} from "../../src/fixtures/parallel-app.js";
import { acme, pauseRefund } from "../../src/office.js";

// On a store with a pool (Postgres), the answer's unit of work that takes the tree's lease also begins
// reading the tree's checkpoint, beside its own statements; the pass the resume moves takes that read
// for its first one (invoke's, or the state read before it) instead of reading when the unit has committed.

/** The reads of the thread's checkpoint the checkpointer is asked for from now on, and the reads ahead begun. */
function watchingReads(checkpointer: object) {
  const saver = checkpointer as ReadsAhead & {
    getTuple(config: { configurable?: Record<string, unknown> }): Promise<unknown>;
  };
  const aheads: string[] = [];
  const reads: { keep: unknown; kept: unknown }[] = [];
  const readAhead = saver.readAhead.bind(saver);
  const getTuple = saver.getTuple.bind(saver);
  saver.readAhead = (threadId) => {
    const ahead = readAhead(threadId);
    if (ahead !== undefined) aheads.push(ahead.token);
    return ahead;
  };
  saver.getTuple = (config) => {
    reads.push({
      keep: config.configurable?.[KEEP_READ_CONFIG_KEY],
      kept: config.configurable?.[KEPT_READ_CONFIG_KEY],
    });
    return getTuple(config);
  };
  // The read ahead itself keeps its own token: it is not one of the pass's reads.
  return { aheads, passReads: () => reads.filter((read) => !aheads.includes(read.keep as string)) };
}

onEachBackend(
  OfficeApplication,
  (test) => {
    test("a resume's pass takes the checkpoint its answer read ahead under the new lease, in invoke's first read", async ({
      app,
      mockLlm,
      store,
    }) => {
      const { pauseId } = await pauseRefund(app, mockLlm, "t-read-ahead");
      const { aheads, passReads } = watchingReads(store.checkpointer);
      const resumed = await app.resume(
        { pauseId, decision: { approved: true } },
        { tenantId: acme.tenantId, answeredBy: "manager-17" },
      );
      expect(resumed.status).toBe(ExecutionStatus.Completed);
      expect(app.get(Desk).refunds).toHaveLength(1);
      expect(aheads).toHaveLength(1);
      // The tree rested paused: the pass invokes its graph at once, and invoke's first read takes the read
      // ahead (keeping nothing itself).
      const [first] = passReads();
      expect(first?.kept).toBe(aheads[0]);
      expect(first?.keep).toBeUndefined();
    });
  },
  {},
  [postgresBackend],
);

onEachBackend(
  ReviewApplication,
  (test) => {
    test("a resume whose pass reads the state first (a tree with a parallel launch) takes the read ahead there, and keeps it for invoke", async ({
      app,
      mockLlm,
      store,
    }) => {
      mockLlm(LegalAgent).thenReturn(replyWith("legal ok"));
      mockLlm(FinanceAgent).thenReturn(
        callTool(BookExpenseTool, { purpose: "audit", amountCents: 200 }),
        replyWith("finance ok"),
      );
      mockLlm(OpsAgent).thenReturn(replyWith("ops ok"));
      mockLlm(SummaryAgent).thenReturn(replyWith("summary"));
      const paused = await app.execute(
        ReviewStart,
        { text: "case 1" },
        { ownerId: "alice", tenant: acme, threadId: "t-read-ahead-launch" },
      );
      const pauseId = paused.pending[0]?.pauseId as string;
      const { aheads, passReads } = watchingReads(store.checkpointer);
      const resumed = await app.resume(
        { pauseId, decision: { approved: true } },
        { tenantId: acme.tenantId, ownerId: "alice" },
      );
      expect(resumed.status).toBe(ExecutionStatus.Completed);
      expect(aheads).toHaveLength(1);
      // The pass's first read (what to resume) takes the read ahead and keeps it again; invoke's takes that.
      const [first, second] = passReads();
      expect(first?.kept).toBe(aheads[0]);
      expect(typeof first?.keep).toBe("string");
      expect(second?.kept).toBe(first?.keep);
    });
  },
  {},
  [postgresBackend],
);
