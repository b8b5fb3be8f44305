import {
  AgentFailedError,
  type App,
  ExecutionEndedError,
  type ExecutionOutput,
  ExecutionStatus,
  FailurePolicy,
  NotPausedError,
  PauseResolution,
  PauseStatus,
  replyWith,
  type Store,
} from "@agboss/core";
import { TestKit } from "@agboss/testing";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import {
  Behaviour,
  BranchFailure,
  type BranchSpec,
  branchTurn,
  buildLaunchApp,
  callKey,
  doneText,
  GateLedger,
  JoinAgent,
  type LaunchSpec,
  type LeafSpec,
  labelOf,
  lastUser,
  TestGateChannel,
} from "../src/fixtures/property-app.js";

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
 * A launch of up to 4 branches. With `depth > 1` a branch may itself be a launch (a child workflow
 * with its own launch) down to `depth` levels; `buildLaunchApp` builds depth 1 only, until child
 * workflows land in core.
 */
export function launchArb(depth: number): fc.Arbitrary<LaunchSpec> {
  const branch: fc.Arbitrary<BranchSpec> =
    depth <= 1
      ? leafArb
      : fc.oneof({ weight: 3, arbitrary: leafArb }, { weight: 1, arbitrary: launchArb(depth - 1) });
  return fc.record({
    kind: fc.constant("launch" as const),
    via: fc.constantFrom("parallel" as const, "each-item" as const),
    failurePolicy: fc.constantFrom(FailurePolicy.FailFast, FailurePolicy.CollectAll),
    maxConcurrency: fc.integer({ min: 1, max: 4 }),
    branches: fc.array(branch, { minLength: 1, maxLength: 4 }),
  });
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
    await drive(kit, spec, built, plan, concurrent);
  } finally {
    await kit.close();
  }
}

async function drive(
  kit: TestKit,
  spec: LaunchSpec,
  built: ReturnType<typeof buildLaunchApp>,
  plan: readonly AnswerPlan[],
  concurrent: boolean,
): Promise<void> {
  const app = await kit.app();
  const other = await kit.openApp();
  const store = await kit.store();
  const withdraw = kit.mockOf(TestGateChannel).withdraw;
  for (const [index, branch] of built.branches.entries()) {
    const script = kit.mockLlm(branch.agent);
    const turns = Array.from({ length: 6 }, () => branchTurn(labelOf(index), branch.leaf));
    if (branch.item === undefined) script.thenReturn(...turns);
    else script.when((r) => lastUser(r) === branch.item).thenReturn(...turns);
  }
  const join = kit.mockLlm(JoinAgent).thenReturn((r) => replyWith(lastUser(r)));

  // Drive it: execute, then answer whatever waits, in the plan's order, until it ends.
  const decisions = new Map<string, boolean>(); // pauseId → approved
  const outputs: ExecutionOutput[] = [];
  let failure: unknown;
  let result: ExecutionOutput | undefined;
  try {
    result = await app.execute(built.start, built.input, { ...run, threadId: "t" });
  } catch (error) {
    failure = error;
  }
  for (let step = 0; result?.status === ExecutionStatus.Paused; step += 1) {
    outputs.push(result);
    expect(step, "answers needed").toBeLessThan(16);
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

  // The execution ends as its policy says.
  const leaves = built.branches.map((b) => b.leaf);
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
  expect(withdraw).not.toHaveBeenCalled();
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

  // Fails today: a resume that waited for the lease while another app's pass failed the execution
  // (a FailFast branch failing on that other answer) returns { status: "completed", output: undefined }
  // though the execution is stored as failed — App.#pass's "another pass already finished the tree"
  // shortcut (`!moved`) reports Completed without reading the stored status.
  test("depth 1: two answers at once, from two apps, never report a failed execution as completed", async () => {
    await fc.assert(
      fc.asyncProperty(launchArb(1), answersArb, (spec, plan) => checkLaunch(spec, plan, true)),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 40), examples: [raceExample] },
    );
  }, 120_000);
});
