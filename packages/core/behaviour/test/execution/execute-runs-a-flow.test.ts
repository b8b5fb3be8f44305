import { callTool, createApp, ExecutionStatus, memoryStore, replyWith } from "@agboss/core";
import { NO_CHECKPOINT_CONFIG_KEY } from "@agboss/core/store";
import { afterEach, describe, expect, test } from "vitest";
import {
  RefundApplication,
  RefundCardTool,
  RefundLedger,
  RefundWorkflowStart,
  scriptedTurns,
} from "../../src/fixtures/refund-app.js";

afterEach(() => {
  scriptedTurns.length = 0;
});

describe("execute", () => {
  test("[HW-02] an execution runs start → agent → tool → finish on a caller-chosen thread", async () => {
    const app = await createApp(RefundApplication, { store: memoryStore() });
    scriptedTurns.push(
      callTool(RefundCardTool, { orderId: "ord_1", amountCents: 1200 }),
      replyWith("Refunded ord_1"),
    );
    const result = await app.execute(
      RefundWorkflowStart,
      { text: "Refund ord_1" },
      {
        threadId: "order:ord_1",
        ownerId: "customer-1",
        tenant: { tenantId: "acme" },
        record: true,
      },
    );
    expect(result.status).toBe(ExecutionStatus.Completed);
    expect(result.output).toEqual({ text: "Refunded ord_1" });
    expect(result.threadId).toBe("order:ord_1");
    expect(result.pending).toEqual([]);
    expect(app.get(RefundLedger).refunds).toEqual([
      { orderId: "ord_1", amountCents: 1200, tenantId: "acme", ownerId: "customer-1" },
    ]);
    expect(result.record?.steps.map((s) => s.type)).toEqual(["model", "tool", "model"]);
    await app.close();
  });
});

describe("a start's checkpoint read", () => {
  test("a start on a new thread tells the checkpointer there is no checkpoint to read; a later start on the thread reads its last one", async () => {
    const app = await createApp(RefundApplication, { store: memoryStore() });
    // The reads of the latest checkpoint of the tree's own namespace, and whether each said there is none.
    const reads: boolean[] = [];
    const checkpointer = app.store.checkpointer;
    const getTuple = checkpointer.getTuple.bind(checkpointer);
    checkpointer.getTuple = (config) => {
      const { checkpoint_ns, checkpoint_id } = config.configurable ?? {};
      if ((checkpoint_ns ?? "") === "" && checkpoint_id === undefined) {
        reads.push(config.configurable?.[NO_CHECKPOINT_CONFIG_KEY] === true);
      }
      return getTuple(config);
    };
    const start = () => {
      scriptedTurns.push(
        callTool(RefundCardTool, { orderId: "ord_1", amountCents: 1200 }),
        replyWith("Refunded ord_1"),
      );
      return app.execute(
        RefundWorkflowStart,
        { text: "Refund ord_1" },
        { threadId: "order:ord_1", ownerId: "customer-1", tenant: { tenantId: "acme" } },
      );
    };
    expect((await start()).status).toBe(ExecutionStatus.Completed);
    // The start's own read says none; what the pass reads once the run rests reads.
    expect(reads[0]).toBe(true);
    expect(reads.slice(1)).not.toContain(true);
    reads.length = 0;
    expect((await start()).status).toBe(ExecutionStatus.Completed);
    expect(reads.length).toBeGreaterThan(0);
    expect(reads).not.toContain(true);
    await app.close();
  });
});
