import {
  type App,
  Application,
  AssemblyError,
  BranchVerdict,
  type ChatRequest,
  callTool,
  createApp,
  ExecutionStatus,
  type FlowBuilder,
  memoryStore,
  NotPausedError,
  PauseResolution,
  PauseStatus,
  QuorumDecidedBy,
  type QuorumJoinOutput,
  QuorumOutcome,
  replyWith,
  start,
  Workflow,
} from "@agboss/core";
import type { ModelScript } from "@agboss/testing";
import { describe, expect, test, vi } from "vitest";
import { onEachBackend } from "../../src/backends.js";
import {
  ApprovedRefundTool,
  BookExpenseTool,
  Desk,
  TestRefundApprovalChannel,
} from "../../src/fixtures/approval-app.js";
import {
  AlphaReviewer,
  BetaReviewer,
  GammaReviewer,
  GroupsStart,
  QuorumApplication,
  QuorumDeadlineStart,
  QuorumFinish,
  QuorumStart,
  TallyAgent,
  TimedQuorumStart,
} from "../../src/fixtures/quorum-app.js";
import { ScriptedModelProvider } from "../../src/fixtures/refund-app.js";

const manager = { tenantId: "acme", answeredBy: "manager-17" } as const;
const owner = { tenantId: "acme", ownerId: "alice" } as const;
const run = { ownerId: "alice", tenant: { tenantId: "acme" } } as const;
const lastUser = (r: ChatRequest) => [...r.messages].reverse().find((m) => m.role === "user")?.content ?? "";

type Mock = (c: unknown) => ModelScript;
/** The reviewer asks the manager for a refund (a channel with withdraw), then answers `text`. */
const asksManager = (mockLlm: Mock, agent: unknown, text = "approve") =>
  mockLlm(agent).thenReturn(
    callTool(ApprovedRefundTool, { orderId: "ord_1", amountCents: 100 }),
    replyWith(text),
  );
/** The reviewer asks the thread's owner to book an expense, then answers `text`. */
const asksOwner = (mockLlm: Mock, agent: unknown, text = "approve") =>
  mockLlm(agent).thenReturn(
    callTool(BookExpenseTool, { purpose: "audit", amountCents: 200 }),
    replyWith(text),
  );
/** The tally agent echoes the join's output, so the test can read it. */
const tally = (mockLlm: Mock) => mockLlm(TallyAgent).thenReturn((r) => replyWith(lastUser(r)));
const joinedOf = (output: unknown) => JSON.parse((output as { text: string }).text) as QuorumJoinOutput;
/** The refund question's pause id, as its channel was told it (pending shows channel-answered pauses without it). */
const refundPauseOf = (app: App) =>
  app.get(Desk).asked.find((a) => a.channel === "refund")?.pauseId as string;
const verdicts = (joined: QuorumJoinOutput) => joined.results.map((r) => [r.branch, r.verdict]);

onEachBackend(QuorumApplication, (test) => {
  test("[FW-06] max counted while a sibling waits: its pause is withdrawn and the join runs in the same call", async ({
    app,
    mockLlm,
    store,
    mockOf,
  }) => {
    const withdraw = mockOf(TestRefundApprovalChannel).withdraw;
    asksManager(mockLlm as Mock, AlphaReviewer);
    mockLlm(BetaReviewer).thenReturn(replyWith("approve"));
    mockLlm(GammaReviewer).thenReturn(replyWith("approve, with notes"));
    const summary = tally(mockLlm as Mock);
    const result = await app.execute(QuorumStart, { text: "case 1" }, { ...run, threadId: "t-q1" });
    expect(result.status).toBe(ExecutionStatus.Completed);
    expect(result.pending).toEqual([]);
    expect(summary.calls).toHaveLength(1);
    const joined = joinedOf(result.output);
    expect(joined).toMatchObject({
      outcome: QuorumOutcome.Won,
      decidedBy: QuorumDecidedBy.Max,
      counted: 2,
      max: 2,
    });
    expect(verdicts(joined)).toEqual([
      ["alpha-reviewer-agent", BranchVerdict.Surplus],
      ["beta-reviewer-agent", BranchVerdict.Counted],
      ["gamma-reviewer-agent", BranchVerdict.Counted],
    ]);
    expect(joined.results[0]).toMatchObject({ withdrawn: true });
    const [pause] = await store.pauses.list({ tenantId: "acme", threadId: "t-q1" });
    expect(pause).toMatchObject({ status: PauseStatus.Cancelled, resolution: PauseResolution.Withdrawn });
    expect(withdraw).toHaveBeenCalledTimes(1);
    expect(withdraw.mock.calls[0]?.[0]).toMatchObject({ resolution: PauseResolution.Withdrawn });
    const late = await app
      .resume({ pauseId: pause?.pauseId as string, decision: { approved: true } }, manager)
      .catch((e: unknown) => e);
    expect(late).toBeInstanceOf(NotPausedError);
    expect(app.get(Desk).refunds).toEqual([]);
  });

  test("[FW-06] a resume that brings the count to max withdraws the other waiting branch in that call, on another instance", async ({
    app,
    openApp,
    mockLlm,
    store,
    mockOf,
  }) => {
    const withdraw = mockOf(TestRefundApprovalChannel).withdraw;
    asksManager(mockLlm as Mock, AlphaReviewer);
    mockLlm(BetaReviewer).thenReturn(replyWith("approve"));
    asksOwner(mockLlm as Mock, GammaReviewer, "approve: booked");
    const summary = tally(mockLlm as Mock);
    const paused = await app.execute(QuorumStart, { text: "case 2" }, { ...run, threadId: "t-q2" });
    expect(paused.status).toBe(ExecutionStatus.Paused);
    expect(paused.pending.map((p) => p.agent).sort()).toEqual([
      "alpha-reviewer-agent",
      "gamma-reviewer-agent",
    ]);
    const expenseId = paused.pending.find((p) => p.agent === "gamma-reviewer-agent")?.pauseId as string;
    const refundId = refundPauseOf(app);
    expect(withdraw).not.toHaveBeenCalled();

    const other = await openApp();
    const done = await other.resume({ pauseId: expenseId, decision: { approved: true } }, owner);
    expect(done.status).toBe(ExecutionStatus.Completed);
    expect(done.pending).toEqual([]);
    expect(summary.calls).toHaveLength(1);
    const joined = joinedOf(done.output);
    expect(joined.outcome).toBe(QuorumOutcome.Won);
    expect(verdicts(joined)).toEqual([
      ["alpha-reviewer-agent", BranchVerdict.Surplus],
      ["beta-reviewer-agent", BranchVerdict.Counted],
      ["gamma-reviewer-agent", BranchVerdict.Counted],
    ]);
    expect(await store.pauses.findByTenantIdAndPauseId("acme", refundId)).toMatchObject({
      status: PauseStatus.Cancelled,
      resolution: PauseResolution.Withdrawn,
    });
    const told = [...app.get(Desk).withdrawn, ...other.get(Desk).withdrawn];
    expect(told).toEqual([{ pauseId: refundId, resolution: PauseResolution.Withdrawn, tenantId: "acme" }]);
    const late = await app
      .resume({ pauseId: refundId, decision: { approved: true } }, manager)
      .catch((e: unknown) => e);
    expect(late).toBeInstanceOf(NotPausedError);
  });

  test("[FW-06] a group that reaches max wins, and the branch still waiting is withdrawn", async ({
    app,
    mockLlm,
    store,
  }) => {
    asksManager(mockLlm as Mock, AlphaReviewer);
    mockLlm(BetaReviewer).thenReturn(replyWith("reject: too risky"));
    mockLlm(GammaReviewer).thenReturn(replyWith("reject"));
    tally(mockLlm as Mock);
    const result = await app.execute(GroupsStart, { text: "case 3" }, { ...run, threadId: "t-q3" });
    expect(result.status).toBe(ExecutionStatus.Completed);
    expect(result.pending).toEqual([]);
    const joined = joinedOf(result.output);
    expect(joined).toMatchObject({
      outcome: QuorumOutcome.Won,
      decidedBy: QuorumDecidedBy.Max,
      group: "reject",
      tally: { approve: 0, reject: 2 },
    });
    expect(joined.results.map((r) => [r.verdict, r.group])).toEqual([
      [BranchVerdict.Surplus, undefined],
      [BranchVerdict.Counted, "reject"],
      [BranchVerdict.Counted, "reject"],
    ]);
    const [pause] = await store.pauses.list({ tenantId: "acme", threadId: "t-q3" });
    expect(pause).toMatchObject({ status: PauseStatus.Cancelled, resolution: PauseResolution.Withdrawn });
  });

  test("[FW-06] a quorum that can no longer be reached is lost at once: the waiting branch is withdrawn, a failure is a verdict", async ({
    app,
    mockLlm,
    store,
  }) => {
    asksManager(mockLlm as Mock, AlphaReviewer);
    mockLlm(BetaReviewer).thenReturn(replyWith("reject"));
    mockLlm(GammaReviewer).thenReturn(() => Promise.reject(new Error("reviewer offline")));
    tally(mockLlm as Mock);
    const result = await app.execute(QuorumStart, { text: "case 4" }, { ...run, threadId: "t-q4" });
    expect(result.status).toBe(ExecutionStatus.Completed);
    expect(result.pending).toEqual([]);
    const joined = joinedOf(result.output);
    expect(joined).toMatchObject({
      outcome: QuorumOutcome.Lost,
      decidedBy: QuorumDecidedBy.Unreachable,
      counted: 0,
    });
    expect(verdicts(joined)).toEqual([
      ["alpha-reviewer-agent", BranchVerdict.Surplus],
      ["beta-reviewer-agent", BranchVerdict.NotCounted],
      ["gamma-reviewer-agent", BranchVerdict.Failed],
    ]);
    expect(joined.results[2]?.error?.message).toContain("reviewer offline");
    const [pause] = await store.pauses.list({ tenantId: "acme", threadId: "t-q4" });
    expect(pause).toMatchObject({ status: PauseStatus.Cancelled, resolution: PauseResolution.Withdrawn });
    const late = await app
      .resume({ pauseId: pause?.pauseId as string, decision: { approved: true } }, manager)
      .catch((e: unknown) => e);
    expect(late).toBeInstanceOf(NotPausedError);
  });

  test("[FW-06] a quorum found decided on resume (its own deadline passed): the rest is withdrawn, a late finisher is surplus", async ({
    app,
    openApp,
    mockLlm,
    store,
    clock,
  }) => {
    asksManager(mockLlm as Mock, AlphaReviewer);
    mockLlm(BetaReviewer).thenReturn(replyWith("approve"));
    asksOwner(mockLlm as Mock, GammaReviewer, "approve");
    tally(mockLlm as Mock);
    const paused = await app.execute(QuorumDeadlineStart, { text: "case 5" }, { ...run, threadId: "t-q5" });
    expect(paused.pending).toHaveLength(2);
    const refundId = refundPauseOf(app);
    const expenseId = paused.pending.find((p) => p.agent === "gamma-reviewer-agent")?.pauseId as string;
    clock.set(clock.now() + 3_600_000);
    await clock.advance(1);
    expect((await store.pauses.findByTenantIdAndPauseId("acme", refundId))?.status).toBe(PauseStatus.Pending);

    const other = await openApp();
    const done = await other.resume({ pauseId: expenseId, decision: { approved: true } }, owner);
    expect(done.status).toBe(ExecutionStatus.Completed);
    expect(done.pending).toEqual([]);
    const joined = joinedOf(done.output);
    // min 1 was met by beta before the half hour passed; gamma's answer came after.
    expect(joined).toMatchObject({
      outcome: QuorumOutcome.Won,
      decidedBy: QuorumDecidedBy.Deadline,
      counted: 1,
    });
    expect(verdicts(joined)).toEqual([
      ["alpha-reviewer-agent", BranchVerdict.Surplus],
      ["beta-reviewer-agent", BranchVerdict.Counted],
      ["gamma-reviewer-agent", BranchVerdict.Surplus],
    ]);
    expect(joined.results[2]?.withdrawn).toBeUndefined();
    expect(await store.pauses.findByTenantIdAndPauseId("acme", refundId)).toMatchObject({
      status: PauseStatus.Cancelled,
      resolution: PauseResolution.Withdrawn,
    });
    const late = await other
      .resume({ pauseId: refundId, decision: { approved: true } }, manager)
      .catch((e: unknown) => e);
    expect(late).toBeInstanceOf(NotPausedError);
  });

  test("[FW-07] a launch deadline that passes while the tree rests withdraws nothing; the next resume finds the quorum decided", async ({
    app,
    openApp,
    mockLlm,
    store,
    clock,
    mockOf,
  }) => {
    const withdraw = mockOf(TestRefundApprovalChannel).withdraw;
    asksManager(mockLlm as Mock, AlphaReviewer);
    asksOwner(mockLlm as Mock, BetaReviewer, "approve");
    mockLlm(GammaReviewer).thenReturn(replyWith("approve"));
    const summary = tally(mockLlm as Mock);
    const paused = await app.execute(TimedQuorumStart, { text: "case 6" }, { ...run, threadId: "t-q6" });
    expect(paused.pending).toHaveLength(2);
    const refundId = refundPauseOf(app);
    const expenseId = paused.pending.find((p) => p.agent === "beta-reviewer-agent")?.pauseId as string;
    clock.set(clock.now() + 2 * 3_600_000);
    await clock.advance(30_000); // the sweep runs, and leaves a resting tree alone
    for (const id of [refundId, expenseId])
      expect((await store.pauses.findByTenantIdAndPauseId("acme", id))?.status).toBe(PauseStatus.Pending);
    expect(withdraw).not.toHaveBeenCalled();
    expect(summary.calls).toHaveLength(0);

    const other = await openApp();
    const done = await other.resume({ pauseId: expenseId, decision: { approved: true } }, owner);
    expect(done.status).toBe(ExecutionStatus.Completed);
    expect(done.pending).toEqual([]);
    expect(summary.calls).toHaveLength(1);
    const joined = joinedOf(done.output);
    expect(joined).toMatchObject({
      outcome: QuorumOutcome.Lost,
      decidedBy: QuorumDecidedBy.Deadline,
      counted: 1,
    });
    expect(verdicts(joined)).toEqual([
      ["alpha-reviewer-agent", BranchVerdict.Surplus],
      ["beta-reviewer-agent", BranchVerdict.Surplus],
      ["gamma-reviewer-agent", BranchVerdict.Counted],
    ]);
    expect(await store.pauses.findByTenantIdAndPauseId("acme", refundId)).toMatchObject({
      status: PauseStatus.Cancelled,
      resolution: PauseResolution.Withdrawn,
    });
    expect(withdraw).toHaveBeenCalledTimes(1);
    expect([...app.get(Desk).withdrawn, ...other.get(Desk).withdrawn].map((w) => w.pauseId)).toEqual([
      refundId,
    ]);
    // The answer given was honoured: its tool ran once, even though it came too late to count.
    expect(other.get(Desk).expenses).toHaveLength(1);
  });

  test("[FW-07] after a deadline passed at rest, a recovery finds the quorum decided, withdraws the rest and joins", async ({
    app,
    mockLlm,
    store,
    clock,
  }) => {
    asksManager(mockLlm as Mock, AlphaReviewer);
    asksOwner(mockLlm as Mock, BetaReviewer, "approve");
    mockLlm(GammaReviewer).thenReturn(replyWith("approve"));
    const summary = tally(mockLlm as Mock);
    const paused = await app.execute(TimedQuorumStart, { text: "case 7" }, { ...run, threadId: "t-q7" });
    const refundId = refundPauseOf(app);
    const expenseId = paused.pending.find((p) => p.agent === "beta-reviewer-agent")?.pauseId as string;
    clock.set(clock.now() + 2 * 3_600_000);
    await clock.advance(1);
    expect((await store.pauses.findByTenantIdAndPauseId("acme", refundId))?.status).toBe(PauseStatus.Pending);
    // The owner's answer landed, then the process that took it died before moving the tree.
    await store.pauses.resolve(
      "acme",
      expenseId,
      { decision: { approved: true }, responder: "alice" },
      clock.now(),
    );
    await clock.advance(30_000);
    await vi.waitFor(async () =>
      expect((await app.record(paused.executionId, { tenantId: "acme" }))?.status).toBe(
        ExecutionStatus.Completed,
      ),
    );
    expect(await store.pauses.findByTenantIdAndPauseId("acme", refundId)).toMatchObject({
      status: PauseStatus.Cancelled,
      resolution: PauseResolution.Withdrawn,
    });
    expect(summary.calls).toHaveLength(1);
    const joined = JSON.parse(lastUser(summary.calls[0] as ChatRequest)) as QuorumJoinOutput;
    expect(joined).toMatchObject({ outcome: QuorumOutcome.Lost, decidedBy: QuorumDecidedBy.Deadline });
    expect(app.get(Desk).withdrawn.map((w) => w.pauseId)).toEqual([refundId]);
  });
});

describe("quorum assembly", () => {
  /** The flow.quorum violations of an application whose one flow joins two reviewers as `join` says. */
  async function quorumViolations(join: (launch: FlowBuilder) => FlowBuilder): Promise<string[]> {
    @Workflow({
      name: "bad-quorum-workflow",
      version: "1.0.0",
      flow: [
        join(start(QuorumStart).toParallel([AlphaReviewer, BetaReviewer]))
          .toAgent(TallyAgent)
          .toFinish(QuorumFinish),
      ],
    })
    class BadQuorumWorkflow {}
    @Application({
      name: "bad-quorum-application",
      workflows: [BadQuorumWorkflow],
      providers: [ScriptedModelProvider],
    })
    class BadQuorumApplication {}
    const error = await createApp(BadQuorumApplication, { store: memoryStore() }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AssemblyError);
    return (error as AssemblyError).violations.filter((v) => v.rule === "flow.quorum").map((v) => v.message);
  }

  test("max is a whole number from 1 to the launch's branches; min is at most max; groups name at least one", async () => {
    expect(await quorumViolations((l) => l.joinQuorum({ max: 3 }))).toEqual([
      "A parallel launch of bad-quorum-workflow: joinQuorum({ max: 3 }) can never be reached by a launch of 2 branches.",
    ]);
    expect((await quorumViolations((l) => l.joinQuorum({ max: 0 })))[0]).toContain(
      "whole number of at least 1",
    );
    expect((await quorumViolations((l) => l.joinQuorum({ max: 1, min: 2 })))[0]).toContain("from 1 to max");
    expect((await quorumViolations((l) => l.joinQuorumGroups({ groups: {}, max: 1 })))[0]).toContain(
      "names no group",
    );
  });

  test("a quorum follows a launch, once", () => {
    expect(() => start(QuorumStart).toAgent(TallyAgent).joinQuorum({ max: 1 })).toThrow(TypeError);
    expect(() =>
      start(QuorumStart)
        .toParallel([AlphaReviewer])
        .joinQuorum({ max: 1 })
        .joinQuorumGroups({ groups: { any: () => true }, max: 1 }),
    ).toThrow(TypeError);
  });
});
