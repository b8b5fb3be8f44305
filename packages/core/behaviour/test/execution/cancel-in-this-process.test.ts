import { callTool, ExecutionEndedError, ExecutionStatus, PauseStatus } from "@agboss/core";
import { expect } from "vitest";
import { onEachBackendAndPostgres } from "../../src/backends.js";
import {
  ApprovedRefundTool,
  Desk,
  OfficeApplication,
  OfficeWorkflowStart,
} from "../../src/fixtures/approval-app.js";
import { acme, holdRefundTool, pauseRefund, scriptThread } from "../../src/office.js";

// app.cancel in the process whose pass moves the tree aborts that pass and records the cancellation
// without its lease. Two moments around the pass's last write: the cancel must hold either way.

onEachBackendAndPostgres(OfficeApplication, (test) => {
  test("a cancel in this process while its pass, already rested, runs its onExecutionPause handler and another instance resumes: the cancel takes the lease like anyone's, and the execution stays cancelled", async ({
    app,
    openApp,
    mockLlm,
    mockOf,
  }) => {
    const tool = holdRefundTool(mockOf(ApprovedRefundTool));
    let resuming: Promise<unknown> | undefined;
    let afterCancel: string | undefined;
    let executionId = "";
    // The pass let its lease go when it stored its rest; its handler is still running.
    mockOf(OfficeApplication).onExecutionPause.mockImplementationOnce(async (event) => {
      executionId = event.executionId;
      const other = await openApp();
      const pauseId = app
        .get(Desk)
        .asked.filter((a) => a.channel === "refund")
        .at(-1)?.pauseId as string;
      resuming = other
        .resume({ pauseId, decision: { approved: true } }, { tenantId: acme.tenantId, answeredBy: "m-1" })
        .catch((error: unknown) => error);
      await tool.entered;
      await app.cancel("t-cancel-rested", { tenantId: acme.tenantId });
      afterCancel = (await app.record(executionId, { tenantId: acme.tenantId }))?.status;
      tool.open();
    });
    await pauseRefund(app, mockLlm, "t-cancel-rested");
    const resumed = await resuming;

    expect(afterCancel).toBe(ExecutionStatus.Cancelled);
    expect(resumed).toBeInstanceOf(ExecutionEndedError);
    expect((resumed as ExecutionEndedError).status).toBe(ExecutionStatus.Cancelled);
    expect((await app.record(executionId, { tenantId: acme.tenantId }))?.status).toBe(
      ExecutionStatus.Cancelled,
    );
  });

  test("a cancel in this process between the pass's last list of pending pauses and its rest: the pass does not store the rest over the cancellation, whose pause stays cancelled", async ({
    app,
    mockLlm,
  }) => {
    // The cancel lands as the pass reads the tree's pending pauses before it rests (after its tool
    // step asked): the pass's next write would be the rest.
    const pauses = app.store.pauses;
    const list = pauses.list.bind(pauses);
    let armed = true;
    pauses.list = async (query) => {
      const listed = await list(query);
      if (armed && query.statuses?.includes(PauseStatus.Pending) === true) {
        armed = false;
        await app.cancel("t-cancel-resting", { tenantId: acme.tenantId });
      }
      return listed;
    };
    const { result, pauseId } = await pauseRefund(app, mockLlm, "t-cancel-resting").catch(
      (error: unknown) => ({ result: error, pauseId: undefined }),
    );
    expect(armed).toBe(false);
    expect(result).toBeInstanceOf(Error);
    const executionId = (await app.store.threads.findByTenantIdAndThreadId(acme.tenantId, "t-cancel-resting"))
      ?.latestExecutionId as string;
    expect((await app.record(executionId, { tenantId: acme.tenantId }))?.status).toBe(
      ExecutionStatus.Cancelled,
    );
    const asked = app
      .get(Desk)
      .asked.filter((a) => a.channel === "refund")
      .at(-1)?.pauseId;
    expect(pauseId ?? asked).toBeDefined();
    expect((await app.store.pauses.findByTenantIdAndPauseId(acme.tenantId, asked as string))?.status).toBe(
      PauseStatus.Cancelled,
    );
  });
  test("a cancel in this process while the pass's rest is being written, as another instance resumes: the cancel takes the lease, and the resume cannot complete the execution over it", async ({
    app,
    openApp,
    mockLlm,
    mockOf,
  }) => {
    const tool = holdRefundTool(mockOf(ApprovedRefundTool));
    // The rest's write has landed (the lease is free) and the pass has not returned from it: another
    // instance resumes and is in its tool when the cancel comes.
    const executions = app.store.executions;
    const save = executions.save.bind(executions);
    let armed = true;
    let resuming: Promise<unknown> | undefined;
    let afterCancel: string | undefined;
    executions.save = async (execution, fence, options) => {
      await save(execution, fence, options);
      if (!armed || execution.status !== ExecutionStatus.Paused || options?.release !== true) return;
      armed = false;
      const other = await openApp();
      const pauseId = app
        .get(Desk)
        .asked.filter((a) => a.channel === "refund")
        .at(-1)?.pauseId as string;
      resuming = other
        .resume({ pauseId, decision: { approved: true } }, { tenantId: acme.tenantId, answeredBy: "m-1" })
        .catch((error: unknown) => error);
      await tool.entered;
      await app.cancel("t-cancel-saving", { tenantId: acme.tenantId });
      afterCancel = (await app.record(execution.executionId, { tenantId: acme.tenantId }))?.status;
      tool.open();
    };
    const { result } = await pauseRefund(app, mockLlm, "t-cancel-saving");
    const resumed = await resuming;

    expect(armed).toBe(false);
    expect(afterCancel).toBe(ExecutionStatus.Cancelled);
    expect(resumed).toBeInstanceOf(ExecutionEndedError);
    expect((await app.record(result.executionId, { tenantId: acme.tenantId }))?.status).toBe(
      ExecutionStatus.Cancelled,
    );
  });

  test("a cancel in this process after the caller's own signal aborted the pass, both between its last list of pending pauses and its rest: the pass does not store the rest over the cancellation", async ({
    app,
    mockLlm,
  }) => {
    const threadId = "t-cancel-after-abort";
    const text = `refund on ${threadId}`;
    scriptThread(mockLlm, text, callTool(ApprovedRefundTool, { orderId: "ord_3", amountCents: 300 }));
    const caller = new AbortController();
    const pauses = app.store.pauses;
    const list = pauses.list.bind(pauses);
    let armed = true;
    pauses.list = async (query) => {
      const listed = await list(query);
      if (armed && query.statuses?.includes(PauseStatus.Pending) === true) {
        armed = false;
        // A "stop" button: the request is aborted and the conversation cancelled together.
        caller.abort();
        await app.cancel(threadId, { tenantId: acme.tenantId });
      }
      return listed;
    };
    const ended = await app
      .execute(
        OfficeWorkflowStart,
        { text },
        { threadId, ownerId: "alice", tenant: acme, signal: caller.signal },
      )
      .catch((error: unknown) => error);

    expect(armed).toBe(false);
    expect(ended).toBeInstanceOf(Error);
    const executionId = (await app.store.threads.findByTenantIdAndThreadId(acme.tenantId, threadId))
      ?.latestExecutionId as string;
    expect((await app.record(executionId, { tenantId: acme.tenantId }))?.status).toBe(
      ExecutionStatus.Cancelled,
    );
    const asked = app
      .get(Desk)
      .asked.filter((a) => a.channel === "refund")
      .at(-1)?.pauseId as string;
    expect((await app.store.pauses.findByTenantIdAndPauseId(acme.tenantId, asked))?.status).toBe(
      PauseStatus.Cancelled,
    );
  });
});
