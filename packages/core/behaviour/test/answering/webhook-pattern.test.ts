import { callTool, replyWith } from "@agboss/core";
import { expect } from "vitest";
import { onEachBackend } from "../../src/backends.js";
import { Desk, OfficeAgent, OfficeApplication } from "../../src/fixtures/approval-app.js";
import { handleApproval, handleRequest } from "../../src/webhooks.js";

onEachBackend(OfficeApplication, (test) => {
  test("[HW-04] the webhook pattern: 202 when paused, 404 for an unknown pause, an idempotent 200 for a duplicate saying who answered", async ({
    app,
    openApp,
    mockLlm,
  }) => {
    const text = "refund on req-1";
    mockLlm(OfficeAgent)
      .when((r) => r.messages.find((m) => m.role === "user")?.content === text)
      .thenReturn(
        callTool((await import("../../src/fixtures/approval-app.js")).ApprovedRefundTool, {
          orderId: "ord_5",
          amountCents: 500,
        }),
        replyWith("Refund handled"),
      );
    const started = await handleRequest(app, {
      requestId: "req-1",
      text,
      tenantId: "acme",
      userId: "customer-1",
    });
    expect(started).toEqual({
      httpStatus: 202,
      body: { state: "awaiting_approval", threadId: "request:req-1" },
    });
    const pauseId = app.get(Desk).asked.at(-1)?.pauseId as string;
    const other = await openApp();
    expect(
      await handleApproval(other, {
        pauseId: "nope",
        tenantId: "acme",
        managerId: "manager-17",
        approved: true,
      }),
    ).toEqual({
      httpStatus: 404,
      body: { status: "unknown_or_expired_pause" },
    });
    expect(
      await handleApproval(other, { pauseId, tenantId: "acme", managerId: "manager-17", approved: true }),
    ).toEqual({ httpStatus: 200, body: { status: "completed" } });
    const duplicate = await handleApproval(app, {
      pauseId,
      tenantId: "acme",
      managerId: "manager-17",
      approved: true,
    });
    expect(duplicate).toEqual({
      httpStatus: 200,
      body: { status: "already_resolved", resolution: "replied", by: "manager-17", at: expect.any(String) },
    });
    expect(
      await handleApproval(app, { pauseId, tenantId: "acme", managerId: "manager-17", reply: "lgtm" }),
    ).toMatchObject({ httpStatus: 200, body: { status: "already_resolved" } });
  });
});
