import {
  AgentFailedError,
  ChannelOutcome,
  DtoValidationError,
  ExecutionStatus,
  NotPausedError,
  PauseAnswererError,
  PauseResolution,
  PauseStatus,
  ThreadOwnerError,
  UnknownPauseError,
} from "@agboss/core";
import { expect } from "vitest";
import { frozen, onEachBackendAndPostgres } from "../../src/backends.js";
import {
  Desk,
  OfficeAgent,
  OfficeApplication,
  TestRefundApprovalChannel,
} from "../../src/fixtures/approval-app.js";
import { pauseExpense, pauseRefund, pauseTwo } from "../../src/office.js";

const manager = { tenantId: "acme", answeredBy: "manager-17" } as const;

onEachBackendAndPostgres(OfficeApplication, (test) => {
  test("[RS-01] resume finds the pause by (tenantId, pauseId) alone and returns threadId, executionId, status, pending, output", async ({
    app,
    openApp,
    mockLlm,
  }) => {
    const { result, pauseId } = await pauseRefund(app, mockLlm, "order:ord_1");
    const other = await openApp();
    const resumed = await other.resume({ pauseId, decision: { approved: true } }, manager);
    expect(resumed).toMatchObject({
      threadId: "order:ord_1",
      executionId: result.executionId,
      status: ExecutionStatus.Completed,
      pending: [],
      output: { text: "Refund handled" },
    });
  });

  test("[RS-02] an unknown pauseId and another tenant's fail the same way with UnknownPauseError", async ({
    app,
    mockLlm,
    store,
  }) => {
    const { pauseId, threadKey } = await pauseRefund(app, mockLlm);
    const before = await frozen(store, "acme", pauseId, threadKey);
    const unknown = await app
      .resume({ pauseId: "no-such-pause", decision: { approved: true } }, manager)
      .catch((e: unknown) => e);
    const foreign = await app
      .resume({ pauseId, decision: { approved: true } }, { tenantId: "globex", answeredBy: "manager-17" })
      .catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(UnknownPauseError);
    expect(foreign).toBeInstanceOf(UnknownPauseError);
    expect((unknown as UnknownPauseError).code).toBe("pause.unknown");
    expect((foreign as UnknownPauseError).code).toBe("pause.unknown");
    expect((foreign as Error).message.replace(pauseId, "<id>")).toBe(
      (unknown as Error).message.replace("no-such-pause", "<id>"),
    );
    expect(await frozen(store, "acme", pauseId, threadKey)).toBe(before);
  });

  test("[RS-03] with other pauses left the execution pauses again; the last answer lets it finish", async ({
    app,
    openApp,
    mockLlm,
  }) => {
    const { refundPauseId, expensePauseId } = await pauseTwo(app, mockLlm);
    const other = await openApp();
    const first = await other.resume(
      { pauseId: expensePauseId, decision: { approved: true } },
      { tenantId: "acme", ownerId: "alice" },
    );
    expect(first.status).toBe(ExecutionStatus.Paused);
    expect(first.pending.map((p) => p.channel)).toEqual(["refund-approval-channel"]);
    const last = await other.resume({ pauseId: refundPauseId, decision: { approved: true } }, manager);
    expect(last.status).toBe(ExecutionStatus.Completed);
    expect(last.output).toEqual({ text: "Both done" });
  });

  test("[RS-04] the decision is validated before it is recorded; invalid ones leave the pause and checkpoint as they were", async ({
    app,
    mockLlm,
    store,
  }) => {
    const { pauseId, threadKey } = await pauseRefund(app, mockLlm);
    const before = await frozen(store, "acme", pauseId, threadKey);
    const bad: unknown[] = [
      { approved: "yes" },
      {},
      { approved: true, extra: 1 },
      { approved: false, overrideArguments: { orderId: "ord_1", amountCents: 5 } },
      { approved: true, overrideArguments: { orderId: "ord_1", amountCents: -5 } },
      { approved: true, overrideArguments: { amountCents: 5 } },
    ];
    for (const decision of bad) {
      const error = await app.resume({ pauseId, decision } as never, manager).catch((e: unknown) => e);
      expect(error, JSON.stringify(decision)).toBeInstanceOf(DtoValidationError);
      expect(await frozen(store, "acme", pauseId, threadKey)).toBe(before);
    }
    const onlyWithApproval = await app
      .resume(
        { pauseId, decision: { approved: false, overrideArguments: { orderId: "x", amountCents: 1 } } },
        manager,
      )
      .catch((e: unknown) => e);
    expect((onlyWithApproval as Error).message).toContain(
      "overrideArguments is allowed only with approved: true",
    );
    const shape = await app
      .resume({ pauseId, decision: { approved: true, overrideArguments: { amountCents: -5 } } }, manager)
      .catch((e: unknown) => e);
    expect((shape as DtoValidationError).issues.map((i) => i.path).sort()).toEqual([
      "amountCents",
      "orderId",
    ]);
    const ok = await app.resume({ pauseId, decision: { approved: true } }, manager);
    expect(ok.status).toBe(ExecutionStatus.Completed);
  });

  test("[RS-05] a channel's decided(…) is validated the same way; an invalid one fails the step", async ({
    app,
    mockLlm,
    mockOf,
  }) => {
    mockOf(TestRefundApprovalChannel).send.mockResolvedValue(
      ChannelOutcome.decided({
        approved: true,
        overrideArguments: { orderId: "ord_1", amountCents: "lots" },
      } as never),
    );
    const error = await pauseRefund(app, mockLlm).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentFailedError);
    expect((error as Error).message).toContain(
      'channel "refund-approval-channel" decided with an invalid decision',
    );
    expect((error as Error).cause).toBeInstanceOf(DtoValidationError);
    expect(app.get(Desk).refunds).toEqual([]);
  });

  test("[RS-06] approved: the tool runs once with overrideArguments; rejected: the model reads who rejected it and why", async ({
    app,
    openApp,
    mockLlm,
  }) => {
    const { pauseId } = await pauseRefund(app, mockLlm, "t-approve");
    const other = await openApp();
    await other.resume(
      { pauseId, decision: { approved: true, overrideArguments: { orderId: "ord_1", amountCents: 500 } } },
      manager,
    );
    expect([...app.get(Desk).refunds, ...other.get(Desk).refunds]).toEqual([
      { orderId: "ord_1", amountCents: 500 },
    ]);

    const rejected = await pauseRefund(app, mockLlm, "t-reject", { orderId: "ord_2", amountCents: 99_000 });
    const rejectedId = app.get(Desk).asked.at(-1)?.pauseId as string;
    await other.resume({ pauseId: rejectedId, decision: { approved: false, reason: "too much" } }, manager);
    expect([...app.get(Desk).refunds, ...other.get(Desk).refunds]).toHaveLength(1);
    const toolMessage = mockLlm(OfficeAgent).calls.at(-1)?.messages.at(-1);
    expect(mockLlm(OfficeAgent).calls.at(-1)?.messages[1]?.content).toBe("refund on t-reject");
    expect(toolMessage).toMatchObject({
      role: "tool",
      content: "Tool error: the call was rejected by manager-17: too much",
    });
    expect(rejected.result.status).toBe(ExecutionStatus.Paused);
  });

  test("[RS-07] app.cancel(threadId) withdraws each pending pause with resolution Cancelled", async ({
    app,
    mockLlm,
    store,
    mockOf,
  }) => {
    const withdraw = mockOf(TestRefundApprovalChannel).withdraw;
    const { refundPauseId, expensePauseId, result } = await pauseTwo(app, mockLlm, "t-cancel");
    await app.cancel("t-cancel", { tenantId: "acme" });
    for (const id of [refundPauseId, expensePauseId]) {
      const pause = await store.pauses.findByTenantIdAndPauseId("acme", id);
      expect(pause).toMatchObject({ status: PauseStatus.Cancelled, resolution: PauseResolution.Cancelled });
    }
    expect(withdraw).toHaveBeenCalledTimes(1);
    expect(withdraw.mock.calls[0]?.[0]).toMatchObject({
      pauseId: refundPauseId,
      resolution: PauseResolution.Cancelled,
    });
    expect((await app.record(result.executionId, { tenantId: "acme" }))?.status).toBe(
      ExecutionStatus.Cancelled,
    );
    const late = await app
      .resume({ pauseId: refundPauseId, decision: { approved: true } }, manager)
      .catch((e: unknown) => e);
    expect(late).toBeInstanceOf(NotPausedError);
  });

  test("bad requests get typed errors and store nothing: both kinds, empty reply, wrong answerer, wrong owner, double answer", async ({
    app,
    mockLlm,
    store,
  }) => {
    const { pauseId, threadKey } = await pauseRefund(app, mockLlm, "t-bad-refund");
    const expense = await pauseExpense(app, mockLlm, "t-bad-expense");
    const before = await frozen(store, "acme", pauseId, threadKey);
    const beforeExpense = await frozen(store, "acme", expense.pauseId, expense.threadKey);
    const attempts: [unknown, unknown, new (...a: never[]) => unknown][] = [
      [{ pauseId, decision: { approved: true }, reply: "ok" }, manager, DtoValidationError],
      [{ pauseId, reply: "  " }, manager, DtoValidationError],
      [{ pauseId }, manager, DtoValidationError],
      [{ pauseId, decision: { approved: true } }, { tenantId: "acme", ownerId: "alice" }, PauseAnswererError],
      [{ pauseId, decision: { approved: true } }, { tenantId: "acme", answeredBy: "" }, PauseAnswererError],
      [
        { pauseId: expense.pauseId, decision: { approved: true } },
        { tenantId: "acme", answeredBy: "manager-17" },
        PauseAnswererError,
      ],
      [
        { pauseId: expense.pauseId, decision: { approved: true } },
        { tenantId: "acme", ownerId: "mallory" },
        ThreadOwnerError,
      ],
    ];
    for (const [request, options, type] of attempts) {
      const error = await app.resume(request as never, options as never).catch((e: unknown) => e);
      expect(error, JSON.stringify([request, options])).toBeInstanceOf(type);
    }
    expect(await frozen(store, "acme", pauseId, threadKey)).toBe(before);
    expect(await frozen(store, "acme", expense.pauseId, expense.threadKey)).toBe(beforeExpense);
    await app.resume({ pauseId, decision: { approved: true } }, manager);
    const after = await frozen(store, "acme", pauseId, threadKey);
    const twice = await app
      .resume({ pauseId, decision: { approved: false } }, manager)
      .catch((e: unknown) => e);
    expect(twice).toBeInstanceOf(NotPausedError);
    expect(await frozen(store, "acme", pauseId, threadKey)).toBe(after);
  });
});
