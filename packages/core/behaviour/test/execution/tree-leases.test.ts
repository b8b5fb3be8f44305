import { callTool, ExecutionStatus, replyWith, ThreadBusyError } from "@agboss/core";
import { testWith } from "@agboss/testing";
import { expect } from "vitest";
import { onEachBackend } from "../../src/backends.js";
import { OfficeApplication } from "../../src/fixtures/approval-app.js";
import {
  RefundAgent,
  RefundApplication,
  RefundCardTool,
  RefundWorkflowStart,
} from "../../src/fixtures/refund-app.js";
import { pauseRefund } from "../../src/office.js";

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

const leaseTest = testWith(OfficeApplication);
leaseTest(
  "[HW-05] a pass holds the tree's 30 s lease; an execution that paused holds none",
  async ({ app, mockLlm, store, clock, mockOf }) => {
    let during: number | undefined;
    const { TestRefundApprovalChannel } = await import("../../src/fixtures/approval-app.js");
    const { ChannelOutcome } = await import("@agboss/core");
    mockOf(TestRefundApprovalChannel).send.mockImplementation(async () => {
      const lease = await store.leases.find("acme/t-lease");
      during = (lease?.expiresAt ?? 0) - clock.now();
      return ChannelOutcome.awaitReply();
    });
    const { result } = await pauseRefund(app, mockLlm, "t-lease");
    expect(during).toBe(30_000);
    expect(result.status).toBe(ExecutionStatus.Paused);
    const after = await store.leases.find("acme/t-lease");
    expect(after === undefined || after.expiresAt <= clock.now()).toBe(true);
  },
);
