import { ExecutionEndedError, ExecutionStatus } from "@agboss/core";
import { expect } from "vitest";
import { onEachBackendAndPostgres } from "../../src/backends.js";
import { ApprovedRefundTool, Desk, OfficeApplication } from "../../src/fixtures/approval-app.js";
import { acme, holdRefundTool, pauseRefund } from "../../src/office.js";

// app.cancel on an instance that does not move the tree: it must not wait for the holder (which may be
// in a tool or a channel's send), and the holder must not end the tree over the cancellation.

onEachBackendAndPostgres(OfficeApplication, (test) => {
  test("a cancel on another instance takes the tree over at once: the holder's pass, still in its tool, cannot complete the cancelled execution, fires no finish, and its caller learns the execution was cancelled", async ({
    app,
    openApp,
    mockLlm,
    mockOf,
  }) => {
    const { pauseId, result } = await pauseRefund(app, mockLlm, "t-cancel-elsewhere");
    const tool = holdRefundTool(mockOf(ApprovedRefundTool));
    const resuming = app
      .resume({ pauseId, decision: { approved: true } }, { tenantId: acme.tenantId, answeredBy: "m-1" })
      .catch((error: unknown) => error);
    await tool.entered;

    const other = await openApp();
    await other.cancel("t-cancel-elsewhere", { tenantId: acme.tenantId });
    expect((await other.record(result.executionId, { tenantId: acme.tenantId }))?.status).toBe(
      ExecutionStatus.Cancelled,
    );

    tool.open();
    const stopped = await resuming;
    expect(stopped).toBeInstanceOf(ExecutionEndedError);
    expect((stopped as ExecutionEndedError).status).toBe(ExecutionStatus.Cancelled);
    const record = await other.record(result.executionId, { tenantId: acme.tenantId });
    expect(record?.status).toBe(ExecutionStatus.Cancelled);
    expect(app.get(Desk).events.filter((e) => e === "finish")).toEqual([]);
  });

  test("a cancel on another instance after the answer's commit and before the step: the holder, whose pause was taken in that commit, confirms its lease before the tool and never starts it", async ({
    app,
    openApp,
    mockLlm,
    mockOf,
  }) => {
    const { pauseId, result } = await pauseRefund(app, mockLlm, "t-cancel-before-tool");
    // onExecutionResume fires after phase 1's commit (the answer, the lease, the take) and before the
    // pass: the other instance takes the tree over there, so no heartbeat of the holder has seen it yet.
    let other: Awaited<ReturnType<typeof openApp>> | undefined;
    mockOf(OfficeApplication).onExecutionResume.mockImplementationOnce(async () => {
      other = await openApp();
      await other.cancel("t-cancel-before-tool", { tenantId: acme.tenantId });
    });
    const stopped = await app
      .resume({ pauseId, decision: { approved: true } }, { tenantId: acme.tenantId, answeredBy: "m-1" })
      .catch((error: unknown) => error);

    expect(mockOf(ApprovedRefundTool).run).not.toHaveBeenCalled();
    expect(app.get(Desk).refunds).toEqual([]);
    expect(stopped).toBeInstanceOf(ExecutionEndedError);
    expect((stopped as ExecutionEndedError).status).toBe(ExecutionStatus.Cancelled);
    const record = await other?.record(result.executionId, { tenantId: acme.tenantId });
    expect(record?.status).toBe(ExecutionStatus.Cancelled);
    expect(app.get(Desk).events.filter((e) => e === "finish")).toEqual([]);
  });
});
