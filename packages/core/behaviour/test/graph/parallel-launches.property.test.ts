import {
  AgentFailedError,
  type App,
  ExecutionEndedError,
  type ExecutionOutput,
  type ExecutionRecord,
  ExecutionStatus,
  FailurePolicy,
  NotPausedError,
  PauseResolution,
  PauseStatus,
  replyWith,
  type Store,
} from "@agboss/core";
import { type ModelScript, TestKit } from "@agboss/testing";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import {
  Behaviour,
  BranchFailure,
  type BranchSpec,
  branchTurn,
  buildLaunchApp,
  buildTreeApp,
  callKey,
  doneText,
  GateLedger,
  JoinAgent,
  type LaunchSpec,
  type LeafSpec,
  labelAt,
  labelOf,
  lastUser,
  TestGateChannel,
  type TreeApp,
  type TreeLeaf,
} from "../../src/fixtures/property-app.js";

// Random parallel launches, answered in random order from two apps over one memory store. For each
// run the test checks what must hold whatever the shape: approved calls run once, rejected and
// withdrawn ones never; every withdrawn question is told to its channel once; the execution ends as
// its failure policy says; `pending` is empty exactly when the execution completed.

const run = { ownerId: "alice", tenant: { tenantId: "acme" } } as const;
const owner = { tenantId: "acme", ownerId: "alice" } as const;

const leafArb: fc.Arbitrary<LeafSpec> = fc.record({
  kind: fc.constant("leaf" as const),
  behaviour: fc.constantFrom(...Object.values(Behaviour)),
  pauses: fc.integer({ min: 1, max: 2 }),
});

/**
 * A launch of up to 4 branches. With `depth > 1` a branch may itself be a launch (run as a child
 * workflow, see `buildTreeApp`) down to `depth` levels. Only the root's launch of leaves may be per
 * item; every other launch is one branch per agent (or per child flow).
 */
export function launchArb(depth: number, nested = false): fc.Arbitrary<LaunchSpec> {
  const branch: fc.Arbitrary<BranchSpec> =
    depth <= 1
      ? leafArb
      : fc.oneof({ weight: 2, arbitrary: leafArb }, { weight: 1, arbitrary: launchArb(depth - 1, true) });
  return fc
    .record({
      kind: fc.constant("launch" as const),
      via: nested
        ? fc.constant("parallel" as const)
        : fc.constantFrom("parallel" as const, "each-item" as const),
      failurePolicy: fc.constantFrom(FailurePolicy.FailFast, FailurePolicy.CollectAll),
      maxConcurrency: fc.integer({ min: 1, max: 4 }),
      branches: fc.array(branch, { minLength: 1, maxLength: 4 }),
    })
    .map((spec) =>
      spec.branches.every((b) => b.kind === "leaf") ? spec : { ...spec, via: "parallel" as const },
    );
}

/** One answer: which of the waiting pauses (modulo how many wait), yes or no, and on which app. */
interface AnswerPlan {
  readonly pick: number;
  readonly approve: boolean;
  readonly onOther: boolean;
  /** In the concurrent property: answer this one and the next waiting one at once, from both apps. */
  readonly together: boolean;
}
const answersArb = fc.array(
  fc.record({
    pick: fc.nat({ max: 7 }),
    approve: fc.boolean(),
    onOther: fc.boolean(),
    together: fc.boolean(),
  }),
  { minLength: 8, maxLength: 8 },
);

const fails = (leaf: LeafSpec) =>
  leaf.behaviour === Behaviour.Fail || leaf.behaviour === Behaviour.PauseThenFail;

async function checkLaunch(spec: LaunchSpec, plan: readonly AnswerPlan[], concurrent = false): Promise<void> {
  const built = buildLaunchApp(spec);
  const kit = new TestKit(built.application);
  try {
    let join: ModelScript | undefined;
    const driven = await answerAll(kit, built.start, built.input, plan, { concurrent, maxSteps: 16 }, () => {
      for (const [index, branch] of built.branches.entries()) {
        const script = kit.mockLlm(branch.agent);
        const turns = Array.from({ length: 6 }, () => branchTurn(labelOf(index), branch.leaf));
        if (branch.item === undefined) script.thenReturn(...turns);
        else script.when((r) => lastUser(r) === branch.item).thenReturn(...turns);
      }
      join = kit.mockLlm(JoinAgent).thenReturn((r) => replyWith(lastUser(r)));
    });
    checkDepthOneOutcome(spec, driven, join as ModelScript);
  } finally {
    await kit.close();
  }
}

/** What driving an execution to its end saw. */
interface Driven {
  readonly failure: unknown;
  readonly result: ExecutionOutput | undefined;
  readonly stored: ExecutionRecord | undefined;
  /** The pauses whose withdrawal was told to the channel, once per telling. */
  readonly told: readonly string[];
  /** pauseId → the call it asked about (`label#n`). */
  readonly asked: ReadonlyMap<string, string>;
  /** pauseId → approved, for each pause that was answered. */
  readonly decisions: ReadonlyMap<string, boolean>;
  readonly pending: readonly { pauseId?: string | undefined; childExecutionId?: string | undefined }[];
}

/**
 * Executes `startCls`, then answers whatever waits, in the plan's order (each from the plan's app, and
 * in the concurrent mode two at once from both apps), until the execution ends. Then checks what holds
 * for any shape: `pending` is empty exactly when the execution completed and no call says completed
 * unless it did; approved calls ran exactly once, rejected and withdrawn ones never; every withdrawn
 * question was told to its channel exactly once, answered ones never.
 */
async function answerAll(
  kit: TestKit,
  startCls: new () => unknown,
  input: { text: string },
  plan: readonly AnswerPlan[],
  { concurrent, maxSteps }: { concurrent: boolean; maxSteps: number },
  script: () => void,
): Promise<Driven> {
  const app = await kit.app();
  const other = await kit.openApp();
  const store = await kit.store();
  const withdraw = kit.mockOf(TestGateChannel).withdraw;
  script();

  // Drive it: execute, then answer whatever waits, in the plan's order, until it ends.
  const decisions = new Map<string, boolean>(); // pauseId → approved
  const outputs: ExecutionOutput[] = [];
  const pending: Driven["pending"][number][] = [];
  let failure: unknown;
  let result: ExecutionOutput | undefined;
  try {
    result = await app.execute(startCls, input, { ...run, threadId: "t" });
  } catch (error) {
    failure = error;
  }
  for (let step = 0; result?.status === ExecutionStatus.Paused; step += 1) {
    outputs.push(result);
    pending.push(...result.pending);
    expect(step, "answers needed").toBeLessThan(maxSteps);
    const answer = plan[step % plan.length] as AnswerPlan;
    const first = answer.pick % result.pending.length;
    const picked = [first];
    if (concurrent && answer.together && result.pending.length > 1)
      picked.push((first + 1) % result.pending.length);
    // Each answer's resume, on its app; settled in the order they return, the last one is the newest word.
    const settled: PromiseSettledResult<ExecutionOutput>[] = [];
    await Promise.all(
      picked.map((at, k) => {
        const pauseId = result?.pending[at]?.pauseId as string;
        const approve = k === 0 ? answer.approve : !answer.approve;
        decisions.set(pauseId, approve);
        const via: App = answer.onOther !== (k === 1) ? other : app;
        return via
          .resume(
            { pauseId, decision: approve ? { approved: true } : { approved: false, reason: "no" } },
            owner,
          )
          .then(
            (value) => settled.push({ status: "fulfilled", value }),
            (reason: unknown) => {
              // Too late: another pass closed it first. It was not answered.
              if (reason instanceof NotPausedError) decisions.delete(pauseId);
              else settled.push({ status: "rejected", reason });
            },
          );
      }),
    );
    result = undefined;
    const rejections: unknown[] = [];
    for (const s of settled) {
      if (s.status === "fulfilled") {
        result = s.value;
        outputs.push(s.value);
      } else rejections.push(s.reason);
    }
    // The call that moved the tree rejects with the branch's failure; a call that waited for it learns
    // the execution ended (it cannot hold the other call's error object, which may be in another process).
    failure = rejections.find((r) => r instanceof AgentFailedError) ?? rejections[0];
    for (const other of rejections.filter((r) => r !== failure)) {
      expect(other).toBeInstanceOf(ExecutionEndedError);
      expect((other as ExecutionEndedError).status).toBe(ExecutionStatus.Failed);
    }
    if (failure !== undefined) result = undefined;
    else if (result !== undefined) outputs.pop();
  }
  if (result !== undefined) outputs.push(result);

  // `pending` is empty exactly when the execution completed; no call says completed unless it did.
  const stored = await app.record(outputs[0]?.executionId ?? (await onlyExecution(store)), {
    tenantId: "acme",
  });
  for (const out of outputs) {
    if (out.status === ExecutionStatus.Completed)
      expect(stored?.status, "a call said completed").toBe(ExecutionStatus.Completed);
    expect(out.pending.length === 0, `pending of a ${out.status} result`).toBe(
      out.status === ExecutionStatus.Completed,
    );
  }

  // Approved calls ran exactly once; rejected and withdrawn ones never.
  const ledgers = [app, other].map((a) => a.get(GateLedger));
  const ran = ledgers.flatMap((l) => l.ran);
  const asked = new Map(ledgers.flatMap((l) => l.asked).map((a) => [a.pauseId, a.call]));
  const pauses = await store.pauses.list({ tenantId: "acme", threadId: "t" });
  expect(new Set(pauses.map((p) => p.pauseId))).toEqual(new Set(asked.keys()));
  for (const pause of pauses) {
    const call = asked.get(pause.pauseId) as string;
    const times = ran.filter((r) => r === call).length;
    expect(times, `${call} (${pause.status}/${pause.resolution})`).toBe(
      decisions.get(pause.pauseId) === true ? 1 : 0,
    );
  }
  expect(ran.length).toBe([...decisions.values()].filter(Boolean).length);

  // Every withdrawn question is told to its channel exactly once; answered ones never.
  const told = withdraw.mock.calls.map(([w]) => w.pauseId);
  const withdrawn = pauses.filter((p) => p.status === PauseStatus.Cancelled).map((p) => p.pauseId);
  expect([...told].sort()).toEqual([...withdrawn].sort());
  for (const id of told) expect(decisions.has(id), `answered pause ${id} withdrawn`).toBe(false);
  for (const p of pauses) {
    if (decisions.has(p.pauseId))
      expect(p).toMatchObject({ status: PauseStatus.Taken, resolution: PauseResolution.Replied });
    else if (!concurrent)
      expect(p).toMatchObject({ status: PauseStatus.Cancelled, resolution: PauseResolution.Withdrawn });
    else expect(p.status).toBe(PauseStatus.Cancelled);
  }
  return { failure, result, stored, told, asked, decisions, pending };
}

/** A depth-1 launch ends as its policy says, its join handing on each branch's output or error. */
function checkDepthOneOutcome(spec: LaunchSpec, driven: Driven, join: ModelScript): void {
  const { failure, result, stored, told, asked } = driven;
  const leaves = spec.branches as LeafSpec[];
  if (spec.failurePolicy === FailurePolicy.FailFast && leaves.some(fails)) {
    expect(failure).toBeInstanceOf(AgentFailedError);
    expect((failure as AgentFailedError).cause).toBeInstanceOf(BranchFailure);
    expect(result).toBeUndefined();
    expect(stored?.status).toBe(ExecutionStatus.Failed);
    expect(join.calls).toHaveLength(0);
    return;
  }
  expect(failure).toBeUndefined();
  expect(result?.status).toBe(ExecutionStatus.Completed);
  expect(told).toEqual([]);
  expect(join.calls).toHaveLength(1);
  const joined = JSON.parse((result?.output as { text: string } | undefined)?.text ?? "{}") as {
    results: { index: number; itemIndex?: number; output?: unknown; error?: { message: string } }[];
  };
  expect(joined.results.map((r) => r.index)).toEqual(leaves.map((_, i) => i));
  for (const [i, leaf] of leaves.entries()) {
    const r = joined.results[i];
    if (spec.via === "each-item") expect(r?.itemIndex).toBe(i);
    if (fails(leaf)) {
      expect(r?.output).toBeUndefined();
      expect(r?.error?.message).toContain(new BranchFailure(labelOf(i)).message);
    } else {
      expect(r).toMatchObject({ output: { text: doneText(labelOf(i)) } });
      expect(r?.error).toBeUndefined();
    }
  }
  // Every gated call of a branch that lived to its end was asked.
  for (const [i, leaf] of leaves.entries()) {
    if (leaf.behaviour === Behaviour.Pause || leaf.behaviour === Behaviour.PauseThenFail) {
      for (let n = 1; n <= leaf.pauses; n += 1) expect([...asked.values()]).toContain(callKey(labelOf(i), n));
    }
  }
}

/** FailFast; b0 fails after its answer, b1 waits: both answered at once, b0 on the first app. */
const raceExample: [LaunchSpec, AnswerPlan[]] = [
  {
    kind: "launch",
    via: "parallel",
    failurePolicy: FailurePolicy.FailFast,
    maxConcurrency: 4,
    branches: [
      { kind: "leaf", behaviour: Behaviour.PauseThenFail, pauses: 1 },
      { kind: "leaf", behaviour: Behaviour.Pause, pauses: 1 },
    ],
  },
  Array.from({ length: 8 }, () => ({ pick: 0, approve: true, onOther: false, together: true })),
];

// Trees (depth up to 3): a branch is a leaf, or a nested launch run as a child workflow.
//
// What a tree should end as, recursively: a leaf fails when its script fails; a launch fails when it is
// FailFast and one of its branches fails (its failure is then its parent's branch error); a CollectAll
// launch, or a FailFast one whose branches all finish, completes with each branch's output or error.
//
// A FailFast launch at any depth withdraws its other branches' pauses as soon as one of its branches
// has failed (fail-fast-inside-children.test.ts pins that down case by case). Which leaf's failure a
// failing launch reports, and whether a sibling's pause was answered before the failure came, depends
// on the order the branches ended in, so the test asserts what holds in every order: approved calls
// ran exactly once, rejected and withdrawn ones never; each withdrawn pause was told exactly once,
// answered ones never; nothing is left waiting; and the root ends as the recursive expectation says
// (only "one of the failures that can reach it" is asserted). Deadlines are not drawn.

/** The subtree fails (a failing leaf, or a FailFast launch with a failing branch). */
const failsBranch = (b: BranchSpec): boolean =>
  b.kind === "leaf" ? fails(b) : b.failurePolicy === FailurePolicy.FailFast && b.branches.some(failsBranch);

/** The leaves whose failure can be the failure of the branch at `path` (none when it does not fail). */
function fatalLabels(b: BranchSpec, path: readonly number[]): string[] {
  if (!failsBranch(b)) return [];
  if (b.kind === "leaf") return [labelAt(path)];
  return b.branches.flatMap((c, i) => fatalLabels(c, [...path, i]));
}

const countLeaves = (b: BranchSpec): number =>
  b.kind === "leaf" ? 1 : b.branches.reduce((n, c) => n + countLeaves(c), 0);
const countPauses = (b: BranchSpec): number =>
  b.kind === "leaf"
    ? b.behaviour === Behaviour.Pause || b.behaviour === Behaviour.PauseThenFail
      ? b.pauses
      : 0
    : b.branches.reduce((n, c) => n + countPauses(c), 0);
const depthOf = (b: BranchSpec): number => (b.kind === "leaf" ? 0 : 1 + Math.max(...b.branches.map(depthOf)));

/** Trees of 2 or 3 levels (depth 1 has its own properties) and up to 12 leaves (so a run stays quick). */
const treeArb = launchArb(3).filter((spec) => depthOf(spec) >= 2 && countLeaves(spec) <= 12);

/** Every message along an error's cause chain. */
function messagesOf(error: unknown): string[] {
  const out: string[] = [];
  for (let e = error; e instanceof Error && out.length < 10; e = e.cause) out.push(e.message);
  return out;
}
const failureOf = (labels: readonly string[]) => labels.map((l) => new BranchFailure(l).message);

async function checkTree(spec: LaunchSpec, plan: readonly AnswerPlan[], concurrent = false): Promise<void> {
  const built = buildTreeApp(spec);
  const kit = new TestKit(built.application);
  try {
    const joins = new Map<string, ModelScript>();
    const driven = await answerAll(
      kit,
      built.start,
      built.input,
      plan,
      { concurrent, maxSteps: countPauses(spec) + 2 },
      () => {
        for (const leaf of built.leaves) {
          const script = kit.mockLlm(leaf.agent);
          const turns = Array.from({ length: 6 }, () => branchTurn(leaf.label, leaf.leaf));
          if (leaf.item === undefined) script.thenReturn(...turns);
          else script.when((r) => lastUser(r) === leaf.item).thenReturn(...turns);
        }
        // One turn each: a join that ran twice would fail the execution with an exhausted script.
        for (const [label, join] of built.joins)
          joins.set(
            label,
            kit.mockLlm(join).thenReturn((r) => replyWith(lastUser(r))),
          );
      },
    );
    checkTreeOutcome(spec, built, driven, joins);
  } finally {
    await kit.close();
  }
}

function checkTreeOutcome(
  spec: LaunchSpec,
  built: TreeApp,
  driven: Driven,
  joins: ReadonlyMap<string, ModelScript>,
): void {
  const { failure, result, stored, asked } = driven;
  const leafOf = new Map(built.leaves.map((l) => [l.label, l]));

  // A pause deep in a child is listed with the child that waits; a pause of the root's own launch not.
  const rootId = stored?.executionId as string;
  for (const p of driven.pending) {
    const label = (asked.get(p.pauseId as string) as string).split("#")[0] as string;
    const leaf = leafOf.get(label) as TreeLeaf;
    if (leaf.childDepth === 0) expect(p.childExecutionId, label).toBeUndefined();
    else expect(p.childExecutionId?.startsWith(`${rootId}/`), `${label}: ${p.childExecutionId}`).toBe(true);
  }

  // No join agent runs twice, and none of a launch that fails (or is withdrawn before it could: a
  // withdrawal stops the whole child, its launch's join included).
  const launches = (b: BranchSpec, path: number[]): [LaunchSpec, number[]][] =>
    b.kind === "leaf" ? [] : [[b, path], ...b.branches.flatMap((c, i) => launches(c, [...path, i]))];
  for (const [launch, path] of launches(spec, [])) {
    const calls = (joins.get(labelAt(path)) as ModelScript).calls.length;
    expect(calls, `join of ${labelAt(path)}`).toBeLessThanOrEqual(failsBranch(launch) ? 0 : 1);
  }

  if (failsBranch(spec)) {
    const fatal = failureOf(fatalLabels(spec, []));
    const said = messagesOf(failure);
    expect(
      said.some((m) => fatal.some((f) => m.includes(f))),
      `${said.join(" <- ")} is none of ${fatal.join(", ")}`,
    ).toBe(true);
    expect(result).toBeUndefined();
    expect(stored?.status).toBe(ExecutionStatus.Failed);
    return;
  }
  expect(failure).toBeUndefined();
  expect(result?.status).toBe(ExecutionStatus.Completed);
  expect(stored?.status).toBe(ExecutionStatus.Completed);
  checkJoined(spec, [], (result?.output as { text: string } | undefined)?.text, joins, asked);
}

/** A completed launch's join handed on each branch's output (a child's: its own join's) or error. */
function checkJoined(
  launch: LaunchSpec,
  path: readonly number[],
  text: string | undefined,
  joins: ReadonlyMap<string, ModelScript>,
  asked: ReadonlyMap<string, string>,
): void {
  const where = labelAt(path);
  expect((joins.get(where) as ModelScript).calls, `join of ${where}`).toHaveLength(1);
  const joined = JSON.parse(text ?? "{}") as {
    results: { index: number; itemIndex?: number; output?: { text: string }; error?: { message: string } }[];
  };
  expect(joined.results.map((r) => r.index)).toEqual(launch.branches.map((_, i) => i));
  for (const [i, branch] of launch.branches.entries()) {
    const at = [...path, i];
    const r = joined.results[i];
    if (launch.via === "each-item") expect(r?.itemIndex).toBe(i);
    if (failsBranch(branch)) {
      expect(r?.output, labelAt(at)).toBeUndefined();
      const fatal = failureOf(fatalLabels(branch, at));
      expect(
        fatal.some((f) => r?.error?.message.includes(f)),
        `${labelAt(at)}: ${r?.error?.message} is none of ${fatal.join(", ")}`,
      ).toBe(true);
    } else if (branch.kind === "leaf") {
      expect(r, labelAt(at)).toMatchObject({ output: { text: doneText(labelAt(at)) } });
      expect(r?.error).toBeUndefined();
    } else {
      expect(r?.error, labelAt(at)).toBeUndefined();
      checkJoined(branch, at, r?.output?.text, joins, asked);
    }
    // Nothing withdraws a branch of a launch that completed: every gated call it made was asked.
    if (
      branch.kind === "leaf" &&
      branch.behaviour !== Behaviour.Finish &&
      branch.behaviour !== Behaviour.Fail
    )
      for (let n = 1; n <= branch.pauses; n += 1)
        expect([...asked.values()]).toContain(callKey(labelAt(at), n));
  }
}

const leaf = (behaviour: Behaviour, pauses = 1): LeafSpec => ({ kind: "leaf", behaviour, pauses });
const launchOf = (failurePolicy: FailurePolicy, branches: BranchSpec[]): LaunchSpec => ({
  kind: "launch",
  via: "parallel",
  failurePolicy,
  maxConcurrency: 4,
  branches,
});
const approveFirst: AnswerPlan[] = Array.from({ length: 8 }, () => ({
  pick: 0,
  approve: true,
  onOther: false,
  together: false,
}));
const treeExamples: [LaunchSpec, AnswerPlan[]][] = [
  // FailFast at the root: b2 fails after its answer, withdrawing pauses one and two children deep.
  [
    launchOf(FailurePolicy.FailFast, [
      launchOf(FailurePolicy.CollectAll, [
        leaf(Behaviour.Pause),
        launchOf(FailurePolicy.FailFast, [leaf(Behaviour.Pause, 2), leaf(Behaviour.Finish)]),
      ]),
      leaf(Behaviour.Pause),
      leaf(Behaviour.PauseThenFail),
    ]),
    Array.from({ length: 8 }, () => ({ pick: 3, approve: true, onOther: true, together: false })),
  ],
  // CollectAll at the root over a FailFast child whose leaf fails: its sibling's pauses are answered
  // (the known limit), the child fails, and the root completes with the child's error.
  [
    launchOf(FailurePolicy.CollectAll, [
      launchOf(FailurePolicy.FailFast, [leaf(Behaviour.Fail), leaf(Behaviour.Pause, 2)]),
      leaf(Behaviour.Pause),
    ]),
    approveFirst,
  ],
  // Three levels of FailFast: the deepest leaf's failure fails every level up to the root.
  [
    launchOf(FailurePolicy.FailFast, [
      launchOf(FailurePolicy.FailFast, [
        launchOf(FailurePolicy.FailFast, [leaf(Behaviour.PauseThenFail), leaf(Behaviour.Finish)]),
        leaf(Behaviour.Pause),
      ]),
      leaf(Behaviour.Pause, 2),
    ]),
    approveFirst,
  ],
];

/** The one execution of the test's thread (when execute itself threw). */
async function onlyExecution(store: Store): Promise<string> {
  const [execution] = await store.executions.listByTenantIdAndThreadId("acme", "t");
  return execution?.executionId as string;
}

describe("parallel launches, at random", () => {
  test("depth 1: answers in any order, from any app, end as the failure policy says", async () => {
    await fc.assert(
      fc.asyncProperty(launchArb(1), answersArb, (spec, plan) => checkLaunch(spec, plan)),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 40) },
    );
  }, 120_000);

  // Failed before 7d51015: a resume that waited for the lease while another app's pass failed the
  // execution (a FailFast branch failing on that other answer) returned { status: "completed" } though
  // the execution was stored as failed. It now rejects with ExecutionEndedError.
  test("depth 1: two answers at once, from two apps, never report a failed execution as completed", async () => {
    await fc.assert(
      fc.asyncProperty(launchArb(1), answersArb, (spec, plan) => checkLaunch(spec, plan, true)),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 40), examples: [raceExample] },
    );
  }, 120_000);

  test("depth 3: random trees of child workflows, answered in any order from any app, end as their policies say", async () => {
    await fc.assert(
      fc.asyncProperty(treeArb, answersArb, (spec, plan) => checkTree(spec, plan)),
      { numRuns: Number(process.env.TREE_RUNS ?? 25), examples: treeExamples },
    );
  }, 120_000);

  test("depth 3: two answers at once, from two apps, in random trees of child workflows", async () => {
    await fc.assert(
      fc.asyncProperty(treeArb, answersArb, (spec, plan) => checkTree(spec, plan, true)),
      { numRuns: Number(process.env.TREE_RUNS ?? 20) },
    );
  }, 120_000);
});
