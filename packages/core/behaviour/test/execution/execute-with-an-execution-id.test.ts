import {
  callTool,
  createApp,
  DtoValidationError,
  ExecutionIdTakenError,
  ExecutionStatus,
  memoryStore,
  replyWith,
} from "@agboss/core";
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

describe("execute with a chosen executionId", () => {
  test("the execution takes the id; a second start with it is refused, runs nothing and leaves the first as it was", async () => {
    const app = await createApp(RefundApplication, { store: memoryStore() });
    try {
      scriptedTurns.push(
        () => callTool(RefundCardTool, { orderId: "ord_1", amountCents: 500 }),
        () => replyWith("Refunded ord_1"),
      );
      const first = await app.execute(
        RefundWorkflowStart,
        { text: "Refund ord_1" },
        { ownerId: "u", tenantId: "acme", threadId: "order:1", executionId: "start-key-1" },
      );
      expect(first).toMatchObject({ executionId: "start-key-1", status: ExecutionStatus.Completed });
      expect(app.get(RefundLedger).refunds).toHaveLength(1);

      scriptedTurns.push(
        () => callTool(RefundCardTool, { orderId: "ord_1", amountCents: 500 }),
        () => replyWith("Refunded ord_1 again"),
      );
      const again = await app
        .execute(
          RefundWorkflowStart,
          { text: "Refund ord_1" },
          { ownerId: "u", tenantId: "acme", threadId: "order:1", executionId: "start-key-1" },
        )
        .catch((error: unknown) => error);
      expect(again).toBeInstanceOf(ExecutionIdTakenError);
      expect(again).toMatchObject({ code: "execution.id-taken", executionId: "start-key-1" });
      expect(app.get(RefundLedger).refunds).toHaveLength(1);
      expect(scriptedTurns).toHaveLength(2); // no model turn was taken
      const record = await app.record("start-key-1", { tenantId: "acme" });
      expect(record).toMatchObject({ status: ExecutionStatus.Completed, output: { text: "Refunded ord_1" } });

      // The lease was given back: the thread takes a follow-up with another id.
      scriptedTurns.length = 0;
      scriptedTurns.push(() => replyWith("Nothing to do"));
      const next = await app.execute(
        RefundWorkflowStart,
        { text: "Thanks" },
        { ownerId: "u", tenantId: "acme", threadId: "order:1", executionId: "start-key-2" },
      );
      expect(next.status).toBe(ExecutionStatus.Completed);
    } finally {
      await app.close();
    }
  });

  test("an id of another tenant does not count; an empty or too long id is a DtoValidationError", async () => {
    const app = await createApp(RefundApplication, { store: memoryStore() });
    try {
      scriptedTurns.push(
        () => replyWith("one"),
        () => replyWith("two"),
      );
      await app.execute(
        RefundWorkflowStart,
        { text: "a" },
        { ownerId: "u", tenantId: "acme", executionId: "k" },
      );
      const other = await app.execute(
        RefundWorkflowStart,
        { text: "b" },
        { ownerId: "u", tenantId: "globex", executionId: "k" },
      );
      expect(other.executionId).toBe("k");
      for (const executionId of ["", "x".repeat(257)]) {
        const error = await app
          .execute(RefundWorkflowStart, { text: "c" }, { ownerId: "u", tenantId: "acme", executionId })
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(DtoValidationError);
        expect((error as DtoValidationError).issues).toMatchObject([{ path: "executionId" }]);
      }
    } finally {
      await app.close();
    }
  });
});
