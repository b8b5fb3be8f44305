import {
  type App,
  Application,
  callTool,
  days,
  ErrorCode,
  ExecutionStatus,
  hours,
  NotPausedError,
  PauseResolution,
  PauseStatus,
  replyWith,
  type Store,
  StoreUnavailableError,
} from "@agboss/core";
import { LEASE_TTL_MS } from "@agboss/core/internal";
import type { PauseRecord, StoredExecution } from "@agboss/core/store";
import { type ModelScript, type TestClock, testWith } from "@agboss/testing";
import { describe, expect, vi } from "vitest";
import {
  onEachBackend,
  onEachBackendAndPostgres,
  postgresBackend,
  sqliteBackend,
} from "../../src/backends.js";
import { watchingReads } from "../../src/checkpoint-reads.js";
import {
  BuyTool,
  CapexTool,
  PurchaseAgent,
  PurchaseApplication,
  PurchaseDesk,
  PurchaseWorkflow,
  PurchaseWorkflowStart,
  QuoteTool,
  RestockTool,
  RushBuyTool,
  TestClerkApprovalChannel,
  TestManagerApprovalChannel,
  TestPriceQuestionChannel,
  TestSupervisorApprovalChannel,
} from "../../src/fixtures/deadline-app.js";
import { ScriptedModelProvider } from "../../src/fixtures/refund-app.js";

const acme = { tenantId: "acme" } as const;
const manager = { tenantId: "acme", answeredBy: "manager-17" } as const;

/** Starts a purchase whose one model turn calls `tool` with `args`, then answers `Done`; returns its paused result. */
async function ask(
  app: App,
  mockLlm: (c: typeof PurchaseAgent) => ModelScript,
  threadId: string,
  call: Parameters<typeof callTool>,
) {
  const text = `purchase on ${threadId}`;
  mockLlm(PurchaseAgent)
    .when((request) => request.messages.find((m) => m.role === "user")?.content === text)
    .thenReturn(callTool(...call), replyWith("Done"));
  const result = await app.execute(
    PurchaseWorkflowStart,
    { text },
    { threadId, ownerId: "alice", tenant: acme },
  );
  expect(result.status).toBe(ExecutionStatus.Paused);
  return result;
}

/**
 * Jumps the clock to `at` and lets the sweep that is then due run to its end on every instance (it lists
 * running executions last, then sets its next timer): a real database answers after `advance` settled.
 */
async function sweepAt(store: Store, clock: TestClock, at: number, instances = 1): Promise<void> {
  const last = vi.spyOn(store.executions, "listByStatus");
  try {
    clock.set(at);
    await clock.advance(30_000);
    await vi.waitFor(() => expect(last.mock.calls.length).toBeGreaterThanOrEqual(instances));
    await vi.waitFor(() => expect(clock.pendingTimers).toBeGreaterThanOrEqual(instances));
  } finally {
    last.mockRestore();
  }
}

const TOASTER = { item: "toaster", amountCents: 4_000 };

onEachBackendAndPostgres(PurchaseApplication, (test) => {
  test("a question nobody answers is reminded once a day, then escalated after two days: the clerk's question is withdrawn once, the manager is asked, and the manager's answer runs the tool once", async ({
    app,
    mockLlm,
    clock,
    store,
  }) => {
    const desk = app.get(PurchaseDesk);
    const t0 = clock.now();
    const paused = await ask(app, mockLlm, "t-escalate", [BuyTool, TOASTER]);
    const clerkPause = desk.pauseOf("clerk");
    expect(desk.reminded).toEqual([]);

    await sweepAt(store, clock, t0 + hours(23).milliseconds);
    expect(desk.reminded).toEqual([]);
    await sweepAt(store, clock, t0 + days(1).milliseconds);
    expect(desk.reminded).toEqual([
      { role: "clerk", pauseId: clerkPause, reminder: 1, askedAt: new Date(t0).toISOString() },
    ]);
    // Later sweeps of the same day remind nobody again.
    await sweepAt(store, clock, t0 + hours(30).milliseconds);
    expect(desk.reminded).toHaveLength(1);
    expect(desk.asked.map((a) => a.role)).toEqual(["clerk"]);

    await sweepAt(store, clock, t0 + days(2).milliseconds);
    expect(desk.withdrawn).toEqual([
      { role: "clerk", pauseId: clerkPause, resolution: PauseResolution.Escalated },
    ]);
    expect(desk.asked.map((a) => a.role)).toEqual(["clerk", "manager"]);
    const managerPause = desk.pauseOf("manager");
    expect(managerPause).not.toBe(clerkPause);
    expect(desk.asked[1]?.ask.value).toEqual(desk.asked[0]?.ask.value);
    // A late answer to the clerk's question is told it was escalated.
    const late = app.resume({ pauseId: clerkPause, decision: { approved: true } }, manager);
    await expect(late).rejects.toBeInstanceOf(NotPausedError);
    await expect(late).rejects.toMatchObject({ resolution: PauseResolution.Escalated });
    expect(await store.pauses.findByTenantIdAndPauseId("acme", managerPause)).toMatchObject({
      status: PauseStatus.Pending,
      channel: "purchase-manager-approval-channel",
      expiresAt: t0 + days(3).milliseconds,
    });
    const waiting = await app.pauses.list({ tenantId: "acme", status: PauseStatus.Pending });
    expect(waiting.map((p) => p.channel)).toEqual(["purchase-manager-approval-channel"]);

    const done = await app.resume(
      { pauseId: managerPause, decision: { approved: true } },
      { ...manager, record: true },
    );
    expect(done.status).toBe(ExecutionStatus.Completed);
    expect(desk.bought).toEqual([TOASTER]);
    expect(desk.withdrawn).toHaveLength(1);
    expect(done.record?.pauses.map((p) => [p.role, p.resolution, p.responder, p.escalatedTo])).toEqual([
      ["purchase-clerk-approval-channel", "escalated", undefined, "purchase-manager-approval-channel"],
      ["purchase-manager-approval-channel", "replied", "manager-17", undefined],
    ]);
    expect(paused.threadId).toBe(done.threadId);
  });

  test("an escalation's pass reads the state and resumes the escalated question's interrupt in one invoke; the manager's answer then needs no state read", async ({
    app,
    mockLlm,
    clock,
    store,
  }) => {
    const desk = app.get(PurchaseDesk);
    const t0 = clock.now();
    await ask(app, mockLlm, "t-escalate-reads", [BuyTool, TOASTER]);
    const reads = watchingReads(store.checkpointer);
    await sweepAt(store, clock, t0 + days(2).milliseconds);
    expect(desk.asked.map((a) => a.role)).toEqual(["clerk", "manager"]);
    // The step passes the clerk's interrupt only with a resume for it: read first, then one invoke (a
    // null invoke would interrupt again and leave the resume to a second one).
    expect(reads).toEqual(["state", "invoke"]);

    reads.length = 0;
    const done = await app.resume(
      { pauseId: desk.pauseOf("manager"), decision: { approved: true } },
      manager,
    );
    expect(done.status).toBe(ExecutionStatus.Completed);
    expect(desk.bought).toEqual([TOASTER]);
    // The clerk's interrupt stays passed (its resume is stored with the task): the manager's answer goes on
    // at once.
    expect(reads).toEqual(["invoke"]);
  });

  test("the escalated question expires on the expiry carried from the first ask (three days): the manager's question is withdrawn, the model reads the rejection, and the audit trail and NotPausedError say expired", async ({
    app,
    mockLlm,
    clock,
    store,
  }) => {
    const desk = app.get(PurchaseDesk);
    const t0 = clock.now();
    const paused = await ask(app, mockLlm, "t-expire", [BuyTool, TOASTER]);
    await sweepAt(store, clock, t0 + days(2).milliseconds);
    const managerPause = desk.pauseOf("manager");
    // The clerk's reminder of day one was overtaken by the escalation; the manager is reminded after
    // twelve hours of their own question, counted from when it was asked (the sweep's pass that asked it
    // may have run before or after the test clock's 30 seconds went by).
    const managerAskedAt = (await store.pauses.findByTenantIdAndPauseId("acme", managerPause))?.askedAt;
    expect(managerAskedAt).toBeGreaterThanOrEqual(t0 + days(2).milliseconds);
    await sweepAt(store, clock, (managerAskedAt as number) + hours(12).milliseconds);
    expect(desk.reminded.map((r) => [r.role, r.reminder])).toEqual([["manager", 1]]);
    await sweepAt(store, clock, t0 + days(3).milliseconds);
    expect(desk.withdrawn.map((w) => [w.role, w.resolution])).toEqual([
      ["clerk", PauseResolution.Escalated],
      ["manager", PauseResolution.Expired],
    ]);
    expect(desk.bought).toEqual([]);
    const record = await app.record(paused.executionId, acme);
    expect(record?.status).toBe(ExecutionStatus.Completed);
    const toolStep = record?.steps.find((s) => s.type === "tool");
    expect(toolStep).toMatchObject({
      error:
        "the call was rejected: nobody answered purchase-manager-approval-channel in time: nobody approved it within three days",
    });
    expect(record?.pauses.map((p) => [p.role, p.resolution, p.decision])).toEqual([
      ["purchase-clerk-approval-channel", "escalated", undefined],
      [
        "purchase-manager-approval-channel",
        "expired",
        { approved: false, reason: "nobody approved it within three days" },
      ],
    ]);
    const late = app.resume({ pauseId: managerPause, decision: { approved: true } }, manager);
    await expect(late).rejects.toThrow(/was expired/);
    expect(await app.pauses.list({ tenantId: "acme", status: PauseStatus.Taken })).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ channel: "purchase-manager-approval-channel", resolution: "expired" }),
      ]),
    );
  });

  test("a tool's deadlines override its role's: no escalation, and ExpiryOutcome.fail fails the agent with a PauseExpiredError (pause.expired)", async ({
    app,
    mockLlm,
    clock,
    store,
  }) => {
    const desk = app.get(PurchaseDesk);
    const t0 = clock.now();
    const paused = await ask(app, mockLlm, "t-rush", [RushBuyTool, TOASTER]);
    await sweepAt(store, clock, t0 + hours(4).milliseconds);
    expect(desk.asked.map((a) => a.role)).toEqual(["clerk"]);
    expect(desk.withdrawn.map((w) => w.resolution)).toEqual([PauseResolution.Expired]);
    const record = await app.record(paused.executionId, acme);
    expect(record?.status).toBe(ExecutionStatus.Failed);
    const error = record?.error as { code?: string; message?: string } | undefined;
    expect(error?.code).toBe(ErrorCode.AgentFailed);
    expect(error?.message).toContain("rush orders wait four hours at most");
    expect(desk.bought).toEqual([]);
  });

  test("ExpiryOutcome.approve runs the tool when nobody objected in time, and a role that is not reminded gets no reminder", async ({
    app,
    mockLlm,
    clock,
    store,
  }) => {
    const desk = app.get(PurchaseDesk);
    const t0 = clock.now();
    const paused = await ask(app, mockLlm, "t-restock", [RestockTool, TOASTER]);
    await sweepAt(store, clock, t0 + hours(1).milliseconds);
    expect(desk.bought).toEqual([TOASTER]);
    expect(desk.reminded).toEqual([]);
    expect((await app.record(paused.executionId, acme))?.status).toBe(ExecutionStatus.Completed);
  });

  test("a question role's expiry answers with its answer value, which the tool receives", async ({
    app,
    mockLlm,
    clock,
    store,
  }) => {
    const desk = app.get(PurchaseDesk);
    const t0 = clock.now();
    const paused = await ask(app, mockLlm, "t-quote", [QuoteTool, { item: "kettle" }]);
    await sweepAt(store, clock, t0 + hours(2).milliseconds);
    expect(desk.bought).toEqual([{ item: "kettle", amountCents: 100 }]);
    const record = await app.record(paused.executionId, acme);
    expect(record?.pauses.map((p) => [p.resolution, p.answer])).toEqual([["expired", { amountCents: 100 }]]);
  });

  test("an answer before the deadline cancels it: the sweep later does nothing", async ({
    app,
    mockLlm,
    clock,
    store,
  }) => {
    const desk = app.get(PurchaseDesk);
    const t0 = clock.now();
    await ask(app, mockLlm, "t-answered", [BuyTool, TOASTER]);
    await app.resume({ pauseId: desk.pauseOf("clerk"), decision: { approved: true } }, manager);
    await sweepAt(store, clock, t0 + days(4).milliseconds);
    expect(desk.reminded).toEqual([]);
    expect(desk.withdrawn).toEqual([]);
    expect(desk.asked.map((a) => a.role)).toEqual(["clerk"]);
    expect(desk.bought).toEqual([TOASTER]);
  });

  test("two calls of one turn keep their own deadlines: the question expires and is answered while the approval waits on, is escalated later, and the manager's answer finishes the turn", async ({
    app,
    mockLlm,
    clock,
    store,
  }) => {
    const desk = app.get(PurchaseDesk);
    const t0 = clock.now();
    const paused = await ask(app, mockLlm, "t-two", [BuyTool, TOASTER, [QuoteTool, { item: "kettle" }]]);
    expect(paused.pending).toHaveLength(2);
    await sweepAt(store, clock, t0 + hours(2).milliseconds);
    expect(desk.bought).toEqual([{ item: "kettle", amountCents: 100 }]);
    const waiting = await app.pauses.list({ tenantId: "acme", status: PauseStatus.Pending });
    expect(waiting.map((p) => p.channel)).toEqual(["purchase-clerk-approval-channel"]);
    await sweepAt(store, clock, t0 + days(2).milliseconds);
    expect(desk.asked.map((a) => a.role).sort()).toEqual(["buyer", "clerk", "manager"]);
    expect(desk.asked.filter((a) => a.role === "manager")).toHaveLength(1);
    const done = await app.resume(
      { pauseId: desk.pauseOf("manager"), decision: { approved: true } },
      manager,
    );
    expect(done.status).toBe(ExecutionStatus.Completed);
    expect(done.output).toEqual({ text: "Done" });
    expect(desk.bought).toEqual([{ item: "kettle", amountCents: 100 }, TOASTER]);
  });

  test("an escalation chain of three roles: each level is asked once, the clerk's own expiry is counted from the clerk's question and carried to the manager", async ({
    app,
    mockLlm,
    clock,
    store,
  }) => {
    const desk = app.get(PurchaseDesk);
    const t0 = clock.now();
    await ask(app, mockLlm, "t-chain", [CapexTool, TOASTER]);
    await sweepAt(store, clock, t0 + hours(6).milliseconds);
    expect(desk.asked.map((a) => a.role)).toEqual(["supervisor", "clerk"]);
    const clerk = await store.pauses.findByTenantIdAndPauseId("acme", desk.pauseOf("clerk"));
    expect(clerk?.askedAt).toBeGreaterThanOrEqual(t0 + hours(6).milliseconds);
    expect(clerk?.expiresAt).toBe((clerk?.askedAt as number) + days(3).milliseconds);
    await sweepAt(store, clock, t0 + hours(6).milliseconds + days(2).milliseconds);
    expect(desk.asked.map((a) => a.role)).toEqual(["supervisor", "clerk", "manager"]);
    expect(desk.withdrawn.map((w) => [w.role, w.resolution])).toEqual([
      ["supervisor", "escalated"],
      ["clerk", "escalated"],
    ]);
    const managerPause = await store.pauses.findByTenantIdAndPauseId("acme", desk.pauseOf("manager"));
    expect(managerPause?.expiresAt).toBe(clerk?.expiresAt);
    const done = await app.resume(
      { pauseId: desk.pauseOf("manager"), decision: { approved: true } },
      { ...manager, record: true },
    );
    expect(done.status).toBe(ExecutionStatus.Completed);
    expect(desk.bought).toEqual([TOASTER]);
    expect(done.record?.pauses.map((p) => [p.role, p.resolution, p.escalatedTo])).toEqual([
      ["purchase-supervisor-approval-channel", "escalated", "purchase-clerk-approval-channel"],
      ["purchase-clerk-approval-channel", "escalated", "purchase-manager-approval-channel"],
      ["purchase-manager-approval-channel", "replied", undefined],
    ]);
  });

  test("a holder that died after storing the manager's pause, before sending it: recovery sends it once, with the same pauseId, and the step goes on from it", async ({
    app,
    mockLlm,
    clock,
    store,
  }) => {
    const t0 = clock.now();
    const paused = await ask(app, mockLlm, "t-unsent", [BuyTool, TOASTER]);
    const desk = app.get(PurchaseDesk);
    const clerk = (await store.pauses.findByTenantIdAndPauseId("acme", desk.pauseOf("clerk"))) as PauseRecord;
    // What the dead holder left: the clerk's pause escalated and taken under its lease, the manager's
    // pause stored but not sent, the tree recorded as running.
    const now = t0 + days(2).milliseconds;
    clock.set(now);
    const lease = await store.leases.acquire({
      key: "acme/t-unsent",
      holder: "dead",
      now,
      ttlMs: LEASE_TTL_MS,
    });
    if (lease === undefined) throw new Error("the tree's lease is held");
    const escalatedTo = "purchase-manager-approval-channel";
    await store.pauses.resolve("acme", clerk.pauseId, { escalatedTo }, now, {
      resolution: PauseResolution.Escalated,
    });
    await store.pauses.take("acme", clerk.pauseId, { at: now }, lease);
    await store.pauses.findOrCreate(
      {
        ...clerk,
        pauseId: "manager-pause-of-the-dead-holder",
        idempotencyKey: `${clerk.idempotencyKey}#escalation-1`,
        channel: escalatedTo,
        isSent: false,
        askedAt: now,
        deadline: { at: now + hours(12).milliseconds, reminders: 0 },
      },
      lease,
    );
    const stored = await store.executions.findByTenantIdAndExecutionId("acme", paused.executionId);
    await store.executions.save({ ...(stored as StoredExecution), status: ExecutionStatus.Running }, lease);

    await sweepAt(store, clock, now + LEASE_TTL_MS + 1);
    await vi.waitFor(() => expect(desk.asked.map((a) => a.role)).toEqual(["clerk", "manager"]));
    expect(desk.pauseOf("manager")).toBe("manager-pause-of-the-dead-holder");
    const done = await app.resume(
      { pauseId: "manager-pause-of-the-dead-holder", decision: { approved: true } },
      manager,
    );
    expect(done.status).toBe(ExecutionStatus.Completed);
    expect(desk.bought).toEqual([TOASTER]);
    expect(desk.asked.map((a) => a.role)).toEqual(["clerk", "manager"]);
  });

  test("the escalation survives restarts: asked on one app, escalated by a second, answered on a third", async ({
    app,
    mockLlm,
    clock,
    store,
    openApp,
  }) => {
    const t0 = clock.now();
    await ask(app, mockLlm, "t-restart", [BuyTool, TOASTER]);
    await app.close();
    const second = await openApp();
    await sweepAt(store, clock, t0 + days(2).milliseconds, 1);
    const managerPause = second.get(PurchaseDesk).pauseOf("manager");
    expect(second.get(PurchaseDesk).withdrawn.map((w) => w.role)).toEqual(["clerk"]);
    await second.close();
    const third = await openApp();
    const done = await third.resume({ pauseId: managerPause, decision: { approved: true } }, manager);
    expect(done.status).toBe(ExecutionStatus.Completed);
    expect(third.get(PurchaseDesk).bought).toEqual([TOASTER]);
  });

  test("a sweep that died after escalating, before moving the tree: the next sweep (a fresh app) asks the manager", async ({
    app,
    mockLlm,
    clock,
    store,
    openApp,
  }) => {
    const t0 = clock.now();
    await ask(app, mockLlm, "t-died", [BuyTool, TOASTER]);
    const clerkPause = app.get(PurchaseDesk).pauseOf("clerk");
    await app.close();
    // What the dead sweep had done: the escalation recorded, nothing else.
    await store.pauses.resolve(
      "acme",
      clerkPause,
      { escalatedTo: "purchase-manager-approval-channel" },
      t0 + days(2).milliseconds,
      { resolution: PauseResolution.Escalated },
    );
    const fresh = await openApp();
    await sweepAt(store, clock, t0 + days(2).milliseconds + 5_000);
    const desk = fresh.get(PurchaseDesk);
    expect(desk.asked.map((a) => a.role)).toEqual(["manager"]);
    const done = await fresh.resume(
      { pauseId: desk.pauseOf("manager"), decision: { approved: true } },
      manager,
    );
    expect(done.status).toBe(ExecutionStatus.Completed);
    expect(desk.bought).toEqual([TOASTER]);
  });
});

onEachBackendAndPostgres(PurchaseApplication, (test) => {
  test("retention that fails holds up nothing: the sweep still sends the day's reminder, and logs the failure", async ({
    app,
    mockLlm,
    clock,
    store,
    logger,
  }) => {
    const t0 = clock.now();
    await ask(app, mockLlm, "t-retention-fault", [BuyTool, TOASTER]);
    const desk = app.get(PurchaseDesk);
    const removal = vi
      .spyOn(store.pauses, "deleteResolvedBefore")
      .mockRejectedValue(new StoreUnavailableError("the removal took too long and was given up"));
    try {
      await sweepAt(store, clock, t0 + days(1).milliseconds);
      // A round removes at most its share of a long backlog.
      expect(removal).toHaveBeenCalledWith(expect.any(Number), 10_000);
    } finally {
      removal.mockRestore();
    }
    expect(desk.reminded.map((r) => r.role)).toEqual(["clerk"]);
    const failed = logger.entries.filter((e) => e.event === "sweep.retention-failed");
    expect(failed.length).toBeGreaterThan(0);
    expect(failed[0]?.level).toBe("warn");
    expect(failed[0]?.message).toMatch(/the removal took too long/);
    expect(logger.entries.filter((e) => e.event === "sweep.failed")).toEqual([]);
  });
});

// The SQL stores only: the memory store keeps a unit's writes made before a throw.
onEachBackend(
  PurchaseApplication,
  (test) => {
    test("an escalation and its audit entry are one commit: a sweep whose audit write keeps failing leaves the question waiting, and the next sweep escalates it with its entry", async ({
      app,
      mockLlm,
      clock,
      store,
      logger,
    }) => {
      const t0 = clock.now();
      await ask(app, mockLlm, "t-audit-fault", [BuyTool, TOASTER]);
      const desk = app.get(PurchaseDesk);
      const clerkPause = desk.pauseOf("clerk");
      // Every try of the sweep's escalation fails at its audit entry (a unit meeting a fault runs again).
      const audit = vi
        .spyOn(store.executions, "savePauseAnswer")
        .mockRejectedValue(new StoreUnavailableError("the database went away"));
      try {
        await sweepAt(store, clock, t0 + days(2).milliseconds);
      } finally {
        audit.mockRestore();
      }
      expect(logger.entries.filter((e) => e.event === "sweep.deadline-failed").length).toBeGreaterThan(0);
      const waiting = await store.pauses.findByTenantIdAndPauseId("acme", clerkPause);
      expect(waiting?.status).toBe(PauseStatus.Pending);
      expect(desk.asked.map((a) => a.role)).toEqual(["clerk"]);
      await sweepAt(store, clock, t0 + days(2).milliseconds + 60_000);
      expect(desk.asked.map((a) => a.role)).toEqual(["clerk", "manager"]);
      const done = await app.resume(
        { pauseId: desk.pauseOf("manager"), decision: { approved: true } },
        { ...manager, record: true },
      );
      expect(done.status).toBe(ExecutionStatus.Completed);
      expect(done.record?.pauses.map((p) => p.resolution)).toEqual(["escalated", "replied"]);
      expect(desk.bought).toEqual([TOASTER]);
    });
  },
  {},
  [sqliteBackend, postgresBackend],
);

onEachBackendAndPostgres(
  PurchaseApplication,
  (test) => {
    test("two instances sweeping the same deadlines at once: one reminder, one withdrawal, one manager question, the tool once", async ({
      apps,
      mockLlm,
      clock,
      store,
    }) => {
      const [one, two] = apps as [App, App];
      // Both sweeps read their page of due deadlines before either acts on it: a real race for every
      // deadline, decided by the store's claim (without this, one sweep could finish before the other starts).
      const list = store.pauses.listDueDeadlines.bind(store.pauses);
      let arrived: (() => void)[] = [];
      vi.spyOn(store.pauses, "listDueDeadlines").mockImplementation(async (args) => {
        const page = await list(args);
        if (page.length > 0) {
          await new Promise<void>((resolve) => {
            arrived.push(resolve);
            const release = () => {
              for (const go of arrived) go();
              arrived = [];
            };
            if (arrived.length === 2) release();
            else setTimeout(release, 2_000);
          });
        }
        return page;
      });
      const t0 = clock.now();
      await ask(one, mockLlm, "t-race-1", [BuyTool, TOASTER]);
      await ask(two, mockLlm, "t-race-2", [BuyTool, { item: "kettle", amountCents: 3_000 }]);
      const both = () => [one.get(PurchaseDesk), two.get(PurchaseDesk)];
      await sweepAt(store, clock, t0 + days(1).milliseconds, 2);
      expect(both().flatMap((d) => d.reminded)).toHaveLength(2);
      await sweepAt(store, clock, t0 + days(2).milliseconds, 2);
      const withdrawn = both().flatMap((d) => d.withdrawn);
      expect(withdrawn).toHaveLength(2);
      expect(new Set(withdrawn.map((w) => w.pauseId)).size).toBe(2);
      const managers = both().flatMap((d) => d.asked.filter((a) => a.role === "manager"));
      expect(managers).toHaveLength(2);
      for (const asked of managers) {
        await one.resume({ pauseId: asked.pauseId, decision: { approved: true } }, manager);
      }
      expect(both().flatMap((d) => d.bought)).toHaveLength(2);
      expect(both().flatMap((d) => d.reminded)).toHaveLength(2);
    });
  },
  { instances: 2 },
);

@Application({
  name: "short-retention-purchase-application",
  workflows: [PurchaseWorkflow],
  providers: [
    PurchaseDesk,
    ScriptedModelProvider,
    TestClerkApprovalChannel,
    TestManagerApprovalChannel,
    TestPriceQuestionChannel,
    TestSupervisorApprovalChannel,
  ],
  pauseRecordRetention: hours(1),
})
class ShortRetentionPurchaseApplication {}

onEachBackendAndPostgres(ShortRetentionPurchaseApplication, (test) => {
  test("an escalated question removed by retention while its step still waits is not asked again: the step goes on from the manager's pause", async ({
    app,
    mockLlm,
    clock,
    store,
  }) => {
    const desk = app.get(PurchaseDesk);
    const t0 = clock.now();
    await ask(app, mockLlm, "t-retained", [BuyTool, TOASTER]);
    const clerkPause = desk.pauseOf("clerk");
    await sweepAt(store, clock, t0 + days(2).milliseconds);
    await sweepAt(store, clock, t0 + days(2).milliseconds + hours(2).milliseconds);
    expect(await store.pauses.findByTenantIdAndPauseId("acme", clerkPause)).toBeUndefined();
    const done = await app.resume(
      { pauseId: desk.pauseOf("manager"), decision: { approved: true } },
      { ...manager, record: true },
    );
    expect(done.status).toBe(ExecutionStatus.Completed);
    expect(desk.asked.map((a) => a.role)).toEqual(["clerk", "manager"]);
    expect(desk.bought).toEqual([TOASTER]);
    // The audit trail outlives the records.
    expect(done.record?.pauses.map((p) => p.resolution)).toEqual(["escalated", "replied"]);
  });

  test("a chain whose first two questions were escalated and removed by retention goes on from the third level: nobody is asked again and the manager's answer runs the tool", async ({
    app,
    mockLlm,
    clock,
    store,
  }) => {
    const desk = app.get(PurchaseDesk);
    const t0 = clock.now();
    await ask(app, mockLlm, "t-retained-chain", [CapexTool, TOASTER]);
    const supervisorPause = desk.pauseOf("supervisor");
    await sweepAt(store, clock, t0 + hours(6).milliseconds);
    const clerkPause = desk.pauseOf("clerk");
    await sweepAt(store, clock, t0 + hours(6).milliseconds + days(2).milliseconds);
    await sweepAt(store, clock, t0 + hours(8).milliseconds + days(2).milliseconds);
    expect(await store.pauses.findByTenantIdAndPauseId("acme", supervisorPause)).toBeUndefined();
    expect(await store.pauses.findByTenantIdAndPauseId("acme", clerkPause)).toBeUndefined();
    const done = await app.resume(
      { pauseId: desk.pauseOf("manager"), decision: { approved: true } },
      { ...manager, record: true },
    );
    expect(done.status, JSON.stringify(done.record?.error)).toBe(ExecutionStatus.Completed);
    expect(desk.asked.map((a) => a.role)).toEqual(["supervisor", "clerk", "manager"]);
    expect(desk.bought).toEqual([TOASTER]);
    expect(done.record?.pauses.map((p) => p.resolution)).toEqual(["escalated", "escalated", "replied"]);
  });
});

describe("with the testing kit's clock alone", () => {
  const test = testWith(PurchaseApplication);

  test("clock.advance drives the deadlines on the memory store: a reminder after a day, the escalation after two", async ({
    app,
    mockLlm,
    mockOf,
    clock,
  }) => {
    const clerk = mockOf(TestClerkApprovalChannel);
    mockLlm(PurchaseAgent).thenReturn(callTool(BuyTool, TOASTER), replyWith("Done"));
    await app.execute(PurchaseWorkflowStart, { text: "buy a toaster" }, { ownerId: "alice" });
    await clock.advance(days(1));
    expect(clerk.remind).toHaveBeenCalledTimes(1);
    await clock.advance(days(1));
    expect(clerk.withdraw.mock.calls[0]?.[0].resolution).toBe(PauseResolution.Escalated);
  });
});
