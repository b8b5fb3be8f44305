import { callTool, createApp, ExecutionStatus, memoryStore, replyWith } from "@agboss/core";
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
