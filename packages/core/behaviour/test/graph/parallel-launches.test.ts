import {
  AgentFailedError,
  ChannelOutcome,
  type ChatRequest,
  callTool,
  ExecutionContext,
  ExecutionStatus,
  JoinDeadlineError,
  NotPausedError,
  PauseResolution,
  PauseStatus,
  replyWith,
  StepFailedError,
  StoreUnavailableError,
} from "@agboss/core";
import { LEASE_TTL_MS } from "@agboss/core/internal";
import { expect, vi } from "vitest";
import {
  onEachBackend,
  onEachBackendAndPostgres,
  postgresBackend,
  sqliteBackend,
} from "../../src/backends.js";
import {
  ApprovedRefundTool,
  BookExpenseTool,
  Desk,
  TestRefundApprovalChannel,
} from "../../src/fixtures/approval-app.js";
import {
  BatchStart,
  FinanceAgent,
  ItemAgent,
  joinErrorsSeen,
  LegalAgent,
  OpsAgent,
  PaymentDeclinedError,
  ReviewApplication,
  ReviewStart,
  SummaryAgent,
  TimedReviewStart,
  TolerantReviewStart,
} from "../../src/fixtures/parallel-app.js";
import { gate } from "../../src/gate.js";
import { lastUser, scriptTwoPauses } from "../../src/review.js";

const manager = { tenantId: "acme", answeredBy: "manager-17" } as const;
const owner = { tenantId: "acme", ownerId: "alice" } as const;
const run = { ownerId: "alice", tenant: { tenantId: "acme" } } as const;

onEachBackendAndPostgres(ReviewApplication, (test) => {
  test("[PA-03] a paused branch frees its slot: its siblings run to their end in the same pass; the join waits only for the paused", async ({
    app,
    mockLlm,
  }) => {
    const summary = scriptTwoPauses(mockLlm as never);
    const result = await app.execute(
      ReviewStart,
      { text: "case 7" },
      { ...run, threadId: "t-pa3", record: true },
    );
    expect(result.status).toBe(ExecutionStatus.Paused);
    expect(result.pending.map((p) => p.agent).sort()).toEqual(["finance-agent", "legal-agent"]);
    // With maxConcurrency 2, ops could only run once a paused branch gave its slot back.
    expect(mockLlm(OpsAgent).calls).toHaveLength(1);
    expect(result.record?.steps.filter((s) => s.type === "model").map((s) => s.step.agent.name)).toContain(
      "ops-agent",
    );
    expect(summary.calls).toHaveLength(0);
  });

  test("[PA-02] several pauses wait at once, each answered by its own id, in any order, from any instance", async ({
    app,
    openApp,
    mockLlm,
  }) => {
    const summary = scriptTwoPauses(mockLlm as never);
    const paused = await app.execute(ReviewStart, { text: "case 8" }, { ...run, threadId: "t-pa2" });
    const expenseId = paused.pending.find((p) => p.agent === "finance-agent")?.pauseId as string;
    const refundId = app.get(Desk).asked.find((a) => a.channel === "refund")?.pauseId as string;
    const other = await openApp();
    const first = await other.resume({ pauseId: expenseId, decision: { approved: true } }, owner);
    expect(first.status).toBe(ExecutionStatus.Paused);
    expect(first.pending.map((p) => p.agent)).toEqual(["legal-agent"]);
    expect(summary.calls).toHaveLength(0);
    const done = await app.resume({ pauseId: refundId, decision: { approved: true } }, manager);
    expect(done.status).toBe(ExecutionStatus.Completed);
    expect(summary.calls).toHaveLength(1);
    const joined = JSON.parse(lastUser(summary.calls[0] as ChatRequest)) as {
      results: { branch: string; output: unknown }[];
    };
    expect(joined.results.map((r) => [r.branch, r.output])).toEqual([
      ["legal-agent", { text: "legal ok" }],
      ["finance-agent", { text: "finance ok" }],
      ["ops-agent", { text: "ops ok" }],
    ]);
    expect([...app.get(Desk).refunds, ...other.get(Desk).refunds]).toHaveLength(1);
    expect([...app.get(Desk).expenses, ...other.get(Desk).expenses]).toHaveLength(1);
  });

  test("[FW-01] under FailFast a failing branch withdraws its paused siblings' pauses and the join runs in the same call", async ({
    app,
    mockLlm,
    store,
    mockOf,
  }) => {
    const withdraw = mockOf(TestRefundApprovalChannel).withdraw;
    mockLlm(LegalAgent).thenReturn(callTool(ApprovedRefundTool, { orderId: "ord_1", amountCents: 100 }));
    mockLlm(FinanceAgent).thenReturn(() => Promise.reject(new Error("ledger offline")));
    mockLlm(OpsAgent).thenReturn(replyWith("ops ok"));
    const error = await app
      .execute(ReviewStart, { text: "case 9" }, { ...run, threadId: "t-fw1" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentFailedError);
    expect((error as Error).message).toContain("finance-agent");
    const [pause] = await store.pauses.list({ tenantId: "acme", threadId: "t-fw1" });
    expect(pause).toMatchObject({ status: PauseStatus.Cancelled, resolution: PauseResolution.Withdrawn });
    expect(withdraw).toHaveBeenCalledTimes(1);
    expect(withdraw.mock.calls[0]?.[0]).toMatchObject({ resolution: PauseResolution.Withdrawn });
    const late = await app
      .resume({ pauseId: pause?.pauseId as string, decision: { approved: true } }, manager)
      .catch((e: unknown) => e);
    expect(late).toBeInstanceOf(NotPausedError);
    expect(app.get(Desk).refunds).toEqual([]);
  });

  test("[FW-01] under FailFast a branch still waiting for its maxConcurrency slot when a sibling fails never starts: it ends withdrawn, its agent never called", async ({
    app,
    mockLlm,
    store,
  }) => {
    // Legal and finance take the two slots; ops waits for one. Legal's model answers only once finance
    // failed and ops went on: it started (its model was called), or the failed branch read which of its
    // siblings had asked (every question of the tree, in any state), so the slot ops gets is finance's.
    const { opened: opsDecided, open: opsGoesOn } = gate();
    const list = store.pauses.list.bind(store.pauses);
    vi.spyOn(store.pauses, "list").mockImplementation(async (query) => {
      const found = await list(query);
      if (query.rootExecutionId !== undefined && query.statuses === undefined) opsGoesOn();
      return found;
    });
    mockLlm(LegalAgent).thenReturn(async () => {
      // (A while at most, so that a change that withdraws ops some other way fails instead of hanging.)
      await Promise.race([opsDecided, new Promise((resolve) => setTimeout(resolve, 1_000))]);
      return callTool(ApprovedRefundTool, { orderId: "ord_1", amountCents: 100 });
    });
    mockLlm(FinanceAgent).thenReturn(() => Promise.reject(new Error("ledger offline")));
    mockLlm(OpsAgent).thenReturn(() => {
      opsGoesOn();
      return replyWith("ops ok");
    });
    const error = await app
      .execute(ReviewStart, { text: "case 9b" }, { ...run, threadId: "t-fw1-queued" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentFailedError);
    expect((error as Error).message).toContain("finance-agent");
    expect(mockLlm(OpsAgent).calls).toHaveLength(0);
    // Legal, which had started, asked; its question was withdrawn by the launch as before.
    const pauses = await store.pauses.list({ tenantId: "acme", threadId: "t-fw1-queued" });
    expect(pauses.map((p) => [p.agent, p.status, p.resolution])).toEqual([
      ["legal-agent", PauseStatus.Cancelled, PauseResolution.Withdrawn],
    ]);
  });

  test("[FW-01] a failed branch whose questions could not be withdrawn (the store out of reach) stops the pass without keeping its queued siblings from starting: recovered, each branch runs", async ({
    app,
    mockLlm,
    store,
    clock,
  }) => {
    // Finance fails and, while it withdraws its questions, the database is out of reach for a while:
    // meanwhile legal ends, and ops, queued, gets legal's slot.
    const { opened: withdrawing, open: financeWithdrawing } = gate();
    const { opened: answered, open: legalAnswered } = gate();
    mockLlm(LegalAgent).thenReturn(async () => {
      await withdrawing;
      legalAnswered();
      return replyWith("legal ok");
    }, replyWith("legal ok"));
    let financeFailed = false;
    mockLlm(FinanceAgent).thenReturn(() => {
      financeFailed = true;
      return Promise.reject(new Error("ledger offline"));
    }, replyWith("finance ok"));
    mockLlm(OpsAgent).thenReturn(replyWith("ops ok"), replyWith("ops ok"));
    const summary = mockLlm(SummaryAgent).thenReturn(replyWith("summary"));
    const list = store.pauses.list.bind(store.pauses);
    let faulted = false;
    const spy = vi.spyOn(store.pauses, "list").mockImplementation(async (query) => {
      if (financeFailed && !faulted && query.statuses?.join() === PauseStatus.Pending) {
        faulted = true;
        financeWithdrawing();
        await answered;
        await new Promise((resolve) => setTimeout(resolve, 100));
        throw new StoreUnavailableError("the database went away");
      }
      return list(query);
    });
    const error = await app
      .execute(ReviewStart, { text: "case 9c" }, { ...run, threadId: "t-fw1-fault" })
      .catch((e: unknown) => e);
    spy.mockRestore();
    expect(error).toBeInstanceOf(StoreUnavailableError);
    await clock.advance(LEASE_TTL_MS + 1);
    await app.sweepOnce(24 * 3_600_000);
    await vi.waitFor(() => expect(summary.calls).toHaveLength(1));
    const joined = JSON.parse(lastUser(summary.calls[0] as ChatRequest)) as {
      results: { branch: string; output?: unknown }[];
    };
    expect(joined.results.map((r) => [r.branch, r.output])).toEqual([
      ["legal-agent", { text: "legal ok" }],
      ["finance-agent", { text: "finance ok" }],
      ["ops-agent", { text: "ops ok" }],
    ]);
  });

  test("a store fault in one branch stops the pass, as outside a launch: its siblings' signal aborts, no question is withdrawn, the launch does not fail, and the sweep carries the tree on once the lease lapsed", async ({
    app,
    mockLlm,
    store,
    clock,
    mockOf,
  }) => {
    const withdraw = mockOf(TestRefundApprovalChannel).withdraw;
    const context = app.get(ExecutionContext);
    // The legal agent asks for a refund (again, when its turn runs again on recovery), then answers.
    const legal = (request: ChatRequest) =>
      request.messages.at(-1)?.role === "tool"
        ? replyWith("legal ok")
        : callTool(ApprovedRefundTool, { orderId: "ord_1", amountCents: 100 });
    mockLlm(LegalAgent).thenReturn(legal, legal, legal);
    // The finance agent's first model call is still running when the legal branch meets the fault.
    let financeSignal: AbortSignal | undefined;
    mockLlm(FinanceAgent).thenReturn(
      async () => {
        financeSignal = context.signal;
        await new Promise((resolve) => setTimeout(resolve, 200));
        return callTool(BookExpenseTool, { purpose: "taxi", amountCents: 100 });
      },
      callTool(BookExpenseTool, { purpose: "taxi", amountCents: 100 }),
    );
    mockLlm(OpsAgent).thenReturn(replyWith("ops ok"), replyWith("ops ok"));
    // The legal branch's pause cannot be stored: the database is out of reach once.
    const create = vi.spyOn(store.pauses, "findOrCreate").mockImplementationOnce(async () => {
      // Once the finance branch is in its model call.
      while (financeSignal === undefined) await new Promise((resolve) => setTimeout(resolve, 5));
      throw new StoreUnavailableError("the database went away");
    });
    const error = await app
      .execute(ReviewStart, { text: "case 12" }, { ...run, threadId: "t-fault" })
      .catch((e: unknown) => e);
    create.mockRestore();
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(financeSignal?.aborted).toBe(true);
    // The lease is left to lapse (a sibling's tool may not heed its signal), not let go.
    expect((await store.leases.find("acme/t-fault"))?.expiresAt).toBeGreaterThan(clock.now());
    expect(withdraw).not.toHaveBeenCalled();
    expect(await store.executions.listByStatus([ExecutionStatus.Failed], 10)).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 250));
    // The app's own sweep may be the one that carries it on (the jump fires its timer): either will do.
    await clock.advance(LEASE_TTL_MS + 1);
    await app.sweepOnce(24 * 3_600_000);
    await vi.waitFor(async () => {
      const pauses = await store.pauses.list({ tenantId: "acme", threadId: "t-fault" });
      expect(pauses.map((p) => [p.agent, p.status]).sort()).toEqual([
        ["finance-agent", PauseStatus.Pending],
        ["legal-agent", PauseStatus.Pending],
      ]);
    });
    expect(withdraw).not.toHaveBeenCalled();
  });

  test("[FW-02] the join gets the very error the branch threw: onJoinError matches by class and cause chain", async ({
    app,
    mockLlm,
  }) => {
    const declined = new PaymentDeclinedError();
    mockLlm(LegalAgent).thenReturn(callTool(ApprovedRefundTool, { orderId: "ord_1", amountCents: 100 }));
    mockLlm(FinanceAgent).thenReturn(() => Promise.reject(declined));
    mockLlm(OpsAgent).thenReturn(replyWith("ops ok"));
    const summary = mockLlm(SummaryAgent).thenReturn((r) => replyWith(`handled: ${lastUser(r)}`));
    const tolerated = await app.execute(
      TolerantReviewStart,
      { text: "case 10" },
      { ...run, threadId: "t-fw2" },
    );
    expect(tolerated.status).toBe(ExecutionStatus.Completed);
    expect(tolerated.output).toEqual({
      text: `handled: ${JSON.stringify({ declined: declined.message }, null, 2)}`,
    });
    // The handler gets the very error the branch threw, and the match from its cause chain.
    const seen = joinErrorsSeen.at(-1);
    expect(seen?.declined).toBe(declined);
    expect(seen?.error).toBeInstanceOf(AgentFailedError);
    expect((seen?.error as Error | undefined)?.cause).toBe(declined);
    expect(summary.calls).toHaveLength(1);

    mockLlm(LegalAgent).thenReturn(replyWith("legal ok"));
    mockLlm(FinanceAgent).thenReturn(() => Promise.reject(declined));
    mockLlm(OpsAgent).thenReturn(replyWith("ops ok"));
    const error = (await app
      .execute(ReviewStart, { text: "case 11" }, { ...run, threadId: "t-fw2b" })
      .catch((e: unknown) => e)) as AgentFailedError;
    expect(error).toBeInstanceOf(AgentFailedError);
    expect(error).toBeInstanceOf(StepFailedError);
    expect(error.cause).toBe(declined);
  });

  test("[FW-04] a join's deadline counts on the Clock, pauses included; the next move after it withdraws what is left", async ({
    app,
    mockLlm,
    store,
    clock,
  }) => {
    mockLlm(LegalAgent).thenReturn(
      callTool(ApprovedRefundTool, { orderId: "ord_1", amountCents: 100 }),
      replyWith("legal ok"),
    );
    mockLlm(FinanceAgent).thenReturn(callTool(BookExpenseTool, { purpose: "audit", amountCents: 200 }));
    const paused = await app.execute(TimedReviewStart, { text: "case 12" }, { ...run, threadId: "t-fw4" });
    expect(paused.pending).toHaveLength(2);
    const refundId = app.get(Desk).asked.find((a) => a.channel === "refund")?.pauseId as string;
    const expenseId = paused.pending.find((p) => p.agent === "finance-agent")?.pauseId as string;
    clock.set(clock.now() + 2 * 3_600_000);
    await clock.advance(1);
    // Nothing moved while the tree rested: both still wait.
    expect((await store.pauses.findByTenantIdAndPauseId("acme", expenseId))?.status).toBe(
      PauseStatus.Pending,
    );
    const error = await app
      .resume({ pauseId: refundId, decision: { approved: true } }, manager)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JoinDeadlineError);
    expect(await store.pauses.findByTenantIdAndPauseId("acme", expenseId)).toMatchObject({
      status: PauseStatus.Cancelled,
      resolution: PauseResolution.Withdrawn,
    });
    expect(app.get(Desk).refunds).toHaveLength(1);
  });

  test("a branch whose channel's send threw fails alone, and withdraws its own question (never asked: its channel not told), so none stays pending after the execution ends; a sibling's question waits on", async ({
    app,
    mockLlm,
    mockOf,
    store,
  }) => {
    const channel = mockOf(TestRefundApprovalChannel);
    channel.send.mockImplementation(async (ask) => {
      if ((ask.value.arguments as { orderId?: string }).orderId === "ord_a")
        throw new Error("chat service is down");
      return ChannelOutcome.awaitReply();
    });
    const items = mockLlm(ItemAgent);
    items
      .when((r) => lastUser(r) === "a")
      .thenReturn(callTool(ApprovedRefundTool, { orderId: "ord_a", amountCents: 5 }));
    items
      .when((r) => lastUser(r) === "b")
      .thenReturn(callTool(ApprovedRefundTool, { orderId: "ord_b", amountCents: 6 }), replyWith("b done"));
    mockLlm(SummaryAgent).thenReturn((r) => replyWith(lastUser(r)));
    const paused = await app.execute(BatchStart, { text: "b,a" }, { ...run, threadId: "t-items-threw" });
    expect(paused.status).toBe(ExecutionStatus.Paused);
    const byItem = async () =>
      new Map(
        (await store.pauses.list({ tenantId: "acme", threadId: "t-items-threw" })).map((p) => [
          p.step.branch?.launches.at(-1)?.index,
          p,
        ]),
      );
    // Item b (index 0) asked first and waits; then item a (index 1) failed.
    const first = await byItem();
    expect(first.get(1)).toMatchObject({
      status: PauseStatus.Cancelled,
      resolution: PauseResolution.Withdrawn,
      isSent: false,
      answer: { withdrawnBy: { executionId: paused.executionId, launchId: expect.any(String) } },
    });
    expect(first.get(0)).toMatchObject({ status: PauseStatus.Pending, isSent: true });
    expect(channel.withdraw).not.toHaveBeenCalled();

    const done = await app.resume(
      { pauseId: first.get(0)?.pauseId as string, decision: { approved: true } },
      manager,
    );
    expect(done.status).toBe(ExecutionStatus.Completed);
    expect(
      await app.pauses.list({ tenantId: "acme", threadId: "t-items-threw", status: PauseStatus.Pending }),
    ).toEqual([]);
    expect(channel.withdraw).not.toHaveBeenCalled();
  });

  test("a per-item launch gives each branch its itemIndex, in pending and in the audit trail", async ({
    app,
    openApp,
    mockLlm,
  }) => {
    const items = mockLlm(ItemAgent);
    items.when((r) => lastUser(r) === "a").thenReturn(replyWith("a done"));
    items
      .when((r) => lastUser(r) === "b")
      .thenReturn(callTool(BookExpenseTool, { purpose: "item b", amountCents: 5 }), replyWith("b done"));
    items.when((r) => lastUser(r) === "c").thenReturn(replyWith("c done"));
    const summary = mockLlm(SummaryAgent).thenReturn((r) => replyWith(lastUser(r)));
    const paused = await app.execute(BatchStart, { text: "a,b,c" }, { ...run, threadId: "t-items" });
    expect(paused.pending).toHaveLength(1);
    expect(paused.pending[0]).toMatchObject({ itemIndex: 1, agent: "item-agent" });
    const other = await openApp();
    const done = await other.resume(
      { pauseId: paused.pending[0]?.pauseId as string, decision: { approved: true } },
      { ...owner, record: true },
    );
    expect(done.status).toBe(ExecutionStatus.Completed);
    const joined = JSON.parse(lastUser(summary.calls[0] as ChatRequest)) as {
      results: { itemIndex: number; output: unknown }[];
    };
    expect(joined.results.map((r) => [r.itemIndex, r.output])).toEqual([
      [0, { text: "a done" }],
      [1, { text: "b done" }],
      [2, { text: "c done" }],
    ]);
    expect(done.record?.pauses[0]?.step).toMatchObject({ itemIndex: 1, copy: 1 });
  });
});

// The SQL stores only: the memory store keeps a unit's writes made before a throw.
onEachBackend(
  ReviewApplication,
  (test) => {
    test("a withdrawal and its audit entry are one commit: when the entry cannot be written the question stays pending, and the sweep withdraws it with its entry and tells its channel", async ({
      app,
      mockLlm,
      store,
      clock,
      mockOf,
    }) => {
      const withdraw = mockOf(TestRefundApprovalChannel).withdraw;
      mockLlm(LegalAgent).thenReturn(callTool(ApprovedRefundTool, { orderId: "ord_1", amountCents: 100 }));
      const offline = () => Promise.reject(new Error("ledger offline"));
      mockLlm(FinanceAgent).thenReturn(offline, offline);
      mockLlm(OpsAgent).thenReturn(replyWith("ops ok"), replyWith("ops ok"));
      // Every try of the withdrawal's audit entry fails (a unit meeting a fault runs again).
      const audit = vi
        .spyOn(store.executions, "savePauseAnswer")
        .mockRejectedValue(new StoreUnavailableError("the database went away"));
      const error = await app
        .execute(ReviewStart, { text: "case 13" }, { ...run, threadId: "t-withdraw-fault" })
        .catch((e: unknown) => e);
      audit.mockRestore();
      expect(error).toBeInstanceOf(StoreUnavailableError);
      const [waiting] = await store.pauses.list({ tenantId: "acme", threadId: "t-withdraw-fault" });
      expect(waiting?.status).toBe(PauseStatus.Pending);
      expect(withdraw).not.toHaveBeenCalled();
      // The failed pass left its lease to lapse; the app's own sweep or this one carries the tree on.
      await clock.advance(LEASE_TTL_MS + 1);
      await app.sweepOnce(24 * 3_600_000);
      await vi.waitFor(async () => {
        const record = await app.record(waiting?.rootExecutionId as string, { tenantId: "acme" });
        expect(record?.status).toBe(ExecutionStatus.Failed);
        expect(record?.pauses.map((p) => p.resolution)).toEqual([PauseResolution.Withdrawn]);
      });
      expect(withdraw).toHaveBeenCalledTimes(1);
    });
  },
  {},
  [sqliteBackend, postgresBackend],
);
