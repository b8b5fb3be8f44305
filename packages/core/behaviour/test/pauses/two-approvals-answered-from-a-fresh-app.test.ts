import { callTool, createApp, ExecutionStatus, memoryStore, PauseAnswerer, replyWith } from "@agboss/core";
import { afterEach, expect, test } from "vitest";
import {
  ApprovedRefundTool,
  BookExpenseTool,
  Desk,
  OfficeApplication,
  OfficeWorkflowStart,
} from "../../src/fixtures/approval-app.js";
import { scriptedTurns } from "../../src/fixtures/refund-app.js";

afterEach(() => {
  scriptedTurns.length = 0;
});

test("two approvals in one turn pause, and are answered from a fresh app over the same store", async () => {
  const store = await memoryStore()({
    appName: "x",
    clock: { now: () => Date.now(), setTimer: () => ({ cancel() {} }) },
    logger: { log() {} },
  });
  const first = await createApp(OfficeApplication, { store });
  scriptedTurns.push(
    callTool(ApprovedRefundTool, { orderId: "ord_9", amountCents: 900, cardNumber: "4242424242424242" }, [
      BookExpenseTool,
      { purpose: "taxi", amountCents: 2500 },
    ]),
    replyWith("Both done"),
  );
  const paused = await first.execute(
    OfficeWorkflowStart,
    { text: "refund and book" },
    { threadId: "t1", ownerId: "alice", tenant: { tenantId: "acme" } },
  );
  expect(paused.status).toBe(ExecutionStatus.Paused);
  expect(paused.pending).toHaveLength(2);
  const refundPending = paused.pending.find((p) => p.channel === "refund-approval-channel");
  const expensePending = paused.pending.find((p) => p.channel === "expense-approval-channel");
  expect(refundPending?.pauseId).toBeUndefined();
  expect(refundPending?.answeredBy).toBe(PauseAnswerer.Channel);
  expect(refundPending?.ask.arguments).toEqual({ orderId: "ord_9", amountCents: 900, cardNumber: "***" });
  expect(expensePending?.pauseId).toEqual(expect.any(String));
  const desk = first.get(Desk);
  const refundPauseId = desk.asked.find((a) => a.channel === "refund")?.pauseId as string;
  await first.close();

  const second = await createApp(OfficeApplication, { store });
  const afterOne = await second.resume(
    { pauseId: refundPauseId, decision: { approved: true } },
    { tenantId: "acme", answeredBy: "manager-17" },
  );
  expect(afterOne.status).toBe(ExecutionStatus.Paused);
  expect(afterOne.pending.map((p) => p.channel)).toEqual(["expense-approval-channel"]);
  const done = await second.resume(
    { pauseId: expensePending?.pauseId as string, decision: { approved: true } },
    { tenantId: "acme", ownerId: "alice", record: true },
  );
  expect(done.status).toBe(ExecutionStatus.Completed);
  expect(done.output).toEqual({ text: "Both done" });
  const desk2 = second.get(Desk);
  expect(desk2.refunds).toHaveLength(1);
  expect(desk2.expenses).toHaveLength(1);
  expect(done.record?.pauses.map((p) => [p.role, p.resolution, p.responder])).toEqual([
    ["refund-approval-channel", "replied", "manager-17"],
    ["expense-approval-channel", "replied", "alice"],
  ]);
  await second.close();
});
