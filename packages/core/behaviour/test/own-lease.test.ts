import { callTool, ExecutionStatus, replyWith, ThreadBusyError } from "@agboss/core";
import { expect } from "vitest";
import { onEachBackend } from "../src/backends.js";
import {
  RefundAgent,
  RefundApplication,
  RefundCardTool,
  RefundWorkflowStart,
} from "../src/fixtures/refund-app.js";

// Each call that moves a tree holds its lease under its own holder id: the sweep, or another call of
// the same app, meets a held lease exactly as another instance would. (With one id for the whole app,
// the store granted the same holder a new epoch, and the first call failed with LeaseLostError.)

const run = { ownerId: "alice", tenant: { tenantId: "acme" } } as const;

onEachBackend(RefundApplication, (test) => {
  test("the sweep of the same app steps aside while one of its calls moves the tree: the tool runs once and the call completes", async ({
    app,
    mockLlm,
    mockOf,
  }) => {
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered = () => {};
    const inTool = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const tool = mockOf(RefundCardTool).run;
    tool.mockImplementation(async () => {
      entered();
      await gate;
      return { status: "refunded ord_5" };
    });
    mockLlm(RefundAgent).thenReturn(
      callTool(RefundCardTool, { orderId: "ord_5", amountCents: 500 }),
      replyWith("Refunded ord_5"),
    );
    const executing = app.execute(
      RefundWorkflowStart,
      { text: "refund ord_5" },
      { ...run, threadId: "t-own" },
    );
    await inTool;
    await app.sweepOnce(24 * 3_600_000);
    const second = await app
      .execute(RefundWorkflowStart, { text: "again" }, { ...run, threadId: "t-own" })
      .catch((e: unknown) => e);
    expect(second).toBeInstanceOf(ThreadBusyError);
    release();
    const done = await executing;
    expect(done.status).toBe(ExecutionStatus.Completed);
    expect(done.output).toEqual({ text: "Refunded ord_5" });
    expect(tool).toHaveBeenCalledTimes(1);
  });
});
