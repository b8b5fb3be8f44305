import type { RunnableConfig } from "@langchain/core/runnables";
import { isGraphInterrupt, Send } from "@langchain/langgraph";
import { closePending } from "../answering/pause-book.js";
import type { AssembledAgent, AssembledFlow, AssembledStep } from "../assembly/assembled-application.js";
import { type AnyClass, componentOf } from "../container/component-registry.js";
import { ExecutionContext, type ExecutionFrame } from "../container/execution-context.js";
import { findCause, hasCause } from "../errors/agboss-error.js";
import { isStoreFault } from "../errors/app-errors.js";
import { StepFailedError } from "../errors/step-failed-error.js";
import { FailurePolicy } from "../flow/failure-policy.js";
import type { Quorum } from "../flow/quorum-options.js";
import { LogLevel } from "../logging/logger.js";
import { PauseResolution } from "../pauses/pause-status.js";
import type { BranchPath } from "../records/branch-path.js";
import type { ExecutionStep } from "../records/execution-record.js";
import { RecentMap } from "../services/recent-map.js";
import type { RuntimeServices } from "../services/runtime-services.js";
import { fenceOf, isLeaseLost } from "../store/fence.js";
import type { Clock } from "../time/clock.js";
import { toMilliseconds } from "../time/duration.js";
import type { CompiledAgentGraph } from "./agent-nodes.js";
import { runAgentVisit } from "./agent-step.js";
import { type ChildGraph, runChild } from "./child-execution.js";
import type {
  BranchFailure,
  BranchResult,
  FlowStateUpdate,
  FlowStateValue,
  LaunchState,
} from "./flow-state.js";
import { BranchWithdrawnError, JoinDeadlineError } from "./launch-errors.js";
import { evaluateQuorum, type QuorumLaunch, quorumDeadlineMs, quorumJoinOutput } from "./quorum.js";

type LaunchStep = Extract<AssembledStep, { kind: "parallel" }>;

/** What one branch task gets through its `Send`. @internal */
export interface BranchTask {
  readonly launchId: string;
  readonly index: number;
  readonly itemIndex: number | undefined;
  readonly agent: string;
  readonly input: unknown;
}

/** The node a launch's branches run in. @internal */
export const branchNodeOf = (launchId: string) => `${launchId}/branch`;
/** The node a launch joins in. @internal */
export const joinNodeOf = (launchId: string) => `${launchId}/join`;

/**
 * How many thrown errors the process keeps for joins still to come, the oldest dropped first: a join
 * that never runs here (its tree was resumed on another instance, cancelled, or ended first) would
 * otherwise leave its branches' errors in memory for good. A join whose error was dropped rebuilds an
 * equivalent one, as after a restart. @internal
 */
export const MAX_THROWN_KEPT = 1_000;
// The error objects branches threw in this process, so the join hands on the very object (keyed by
// execution, launch and branch). After a restart the join rebuilds an equivalent error instead.
const thrownByBranch = new RecentMap<string, unknown>(MAX_THROWN_KEPT);

/** Keeps a branch's error for its join, dropping the oldest kept past {@link MAX_THROWN_KEPT}. @internal */
export function keepThrown(key: string, error: unknown): void {
  thrownByBranch.set(key, error);
}

/** The error a branch threw in this process, if it is still kept. @internal */
export function keptThrown(key: string): unknown {
  return thrownByBranch.get(key);
}
/**
 * The slots of one launch in one pass: a branch waits for one, and frees it when it ends or pauses.
 * `failed` is set by a branch that failed the launch (FailFast), once its questions are withdrawn: its
 * failure, and the branches that had asked a question in the tree by then. A branch that gets its slot
 * after that and is not among them never started, and does not start now.
 */
interface SlotPool {
  active: number;
  readonly waiting: (() => void)[];
  failed: { readonly asked: ReadonlySet<number>; readonly failure: BranchFailure } | undefined;
}
// By the pass (its signal: one per pass, shared by the flows and child flows it runs), then by tenant,
// execution and launch: a pass that stopped while branches of it still run leaves nothing to the next.
const slotsByPass = new WeakMap<AbortSignal, Map<string, SlotPool>>();

async function takeSlot(
  pass: AbortSignal,
  key: string,
  max: number,
): Promise<{ pool: SlotPool; release: () => void }> {
  let slots = slotsByPass.get(pass);
  if (slots === undefined) {
    slots = new Map();
    slotsByPass.set(pass, slots);
  }
  const inPass = slots;
  let pool = inPass.get(key);
  if (pool === undefined) {
    pool = { active: 0, waiting: [], failed: undefined };
    inPass.set(key, pool);
  }
  const held = pool;
  while (held.active >= max) await new Promise<void>((resolve) => held.waiting.push(resolve));
  held.active += 1;
  const release = () => {
    held.active -= 1;
    const next = held.waiting.shift();
    if (next !== undefined) next();
    else if (held.active === 0) inPass.delete(key);
  };
  return { pool: held, release };
}

/** Whether a failing branch decides the launch (FailFast, and no quorum judges the branches instead). */
function failsFast(step: LaunchStep): boolean {
  return (
    step.quorum === undefined &&
    (step.options.failurePolicy ?? FailurePolicy.FailFast) === FailurePolicy.FailFast
  );
}

function frame(): ExecutionFrame {
  return ExecutionContext.current() as ExecutionFrame;
}

/** True when a launch can no longer use its unfinished branches: FailFast saw a failure, or its deadline passed. @internal */
export function launchDecided(step: LaunchStep, state: FlowStateValue, now: number): boolean {
  const launch = state.run.launches[step.nodeId];
  if (launch === undefined) return false;
  if (step.quorum !== undefined) return quorumDecided(step, step.quorum, launch, now);
  const results = Object.values(launch.results);
  if (
    (step.options.failurePolicy ?? FailurePolicy.FailFast) === FailurePolicy.FailFast &&
    results.some((r) => r.error !== undefined || r.withdrawnFor !== undefined)
  ) {
    return true;
  }
  return (
    step.options.deadline !== undefined && now - launch.startedAt >= toMilliseconds(step.options.deadline)
  );
}

/** Starts a launch: stamps when, so its deadline counts on the Clock. @internal */
export function launchNode(services: RuntimeServices, step: LaunchStep) {
  clocks.set(step, services.clock);
  return (state: FlowStateValue): FlowStateUpdate => ({
    run: {
      launches: { [step.nodeId]: { startedAt: services.clock.now(), branches: branchCountOf(step, state) } },
    },
  });
}

/** Sends one task per branch (per agent, or per item), or goes straight to the join when there are none. @internal */
export function launchRouter(step: LaunchStep, inputOf: (s: FlowStateValue) => unknown) {
  inputs.set(step, inputOf);
  return (state: FlowStateValue): Send[] | string => {
    const input = inputOf(state);
    // A branch is named by what it runs: an agent's name, or a child flow's start.
    const names =
      step.workflows.length > 0
        ? step.workflows.map((w) => componentOf<{ name?: string }>(w)?.options.name ?? w.name)
        : step.agents.map((a) => a.name);
    const tasks: BranchTask[] =
      step.items === undefined
        ? names.map((name, index) => ({
            launchId: step.nodeId,
            index,
            itemIndex: undefined,
            agent: name,
            input,
          }))
        : step.items(input).map((item, index) => ({
            launchId: step.nodeId,
            index,
            itemIndex: index,
            agent: names[0] as string,
            input: item,
          }));
    if (tasks.length === 0) return joinNodeOf(step.nodeId);
    return tasks.map((task) => new Send(branchNodeOf(step.nodeId), task));
  };
}

/**
 * One branch: runs its agent visit as a subgraph in this task. A pause interrupts only this task (its
 * siblings run on in the same pass); a failure or a withdrawal becomes the branch's result.
 * @internal
 */
export function branchNode(
  services: RuntimeServices,
  step: LaunchStep,
  graphOf: (agent: AssembledAgent) => CompiledAgentGraph,
  childOf: (start: AnyClass) => { flow: AssembledFlow; graph: ChildGraph },
) {
  return async (task: BranchTask, config?: RunnableConfig): Promise<FlowStateUpdate> => {
    const parent = frame();
    const { executionId } = parent;
    const launchKey = `${parent.tenant.tenantId}/${executionId}/${step.nodeId}`;
    const slot = await takeSlot(
      parent.signal,
      launchKey,
      step.options.maxConcurrency ?? Number.POSITIVE_INFINITY,
    );
    const base = { index: task.index, branch: task.agent, itemIndex: task.itemIndex };
    const record = (
      result: BranchResult,
      steps: readonly ExecutionStep[] = [],
      children = {},
    ): FlowStateUpdate => ({
      run: {
        steps,
        children,
        launches: { [step.nodeId]: { results: { [String(task.index)]: ended(step, result) } } },
      },
    });
    const branch = {
      launches: [
        ...(parent.branch?.launches ?? []),
        { executionId, launchId: step.nodeId, index: task.index, itemIndex: task.itemIndex },
      ],
    };
    try {
      // A sibling failed the launch in this pass before this branch got its slot. One that asked nothing
      // in the tree (it never started) does not start now: it ends withdrawn, as the failure withdraws its
      // siblings. One that asked (a paused branch run again) goes on, and the launch withdraws its
      // question, or the launch above it this branch's, as before.
      const { failed } = slot.pool;
      if (failed !== undefined && !failed.asked.has(task.index)) {
        return record({ ...base, withdrawn: true, withdrawnFor: failed.failure });
      }
      // A child branch is the launch's child flow at its index (start classes may share a JavaScript name).
      const childStart =
        step.workflows.length > 0 ? step.workflows[task.itemIndex === undefined ? task.index : 0] : undefined;
      if (childStart !== undefined) {
        const child = childOf(childStart);
        const childId = `${executionId}/${step.nodeId}/${task.index}`;
        const done = await runChild(child.flow, child.graph, {
          childId,
          input: task.input,
          branch,
          itemIndex: task.itemIndex,
        });
        return record({ ...base, output: done.output }, [], { [childId]: done.summary });
      }
      const agent = step.agents.find((a) => a.name === task.agent) as AssembledAgent;
      const done = await runAgentVisit(graphOf(agent), {
        agent,
        nodeId: `${step.nodeId}/${task.index}:agent/${agent.name}`,
        visit: 1,
        input: task.input,
        history: [],
        branch,
      });
      return record({ ...base, output: done.output }, done.steps);
    } catch (error) {
      if (isGraphInterrupt(error) || stopsThePass(error, parent.signal)) throw error;
      const withdrawal =
        error instanceof BranchWithdrawnError ? error : findCause(error, BranchWithdrawnError);
      const withdrawn = withdrawal !== undefined;
      // A branch withdrawn by this very launch ends as withdrawn, and the launch joins. One withdrawn by a
      // launch above it (in a parent execution) passes the withdrawal up, so the whole child stops
      // instead of joining and running its later steps.
      const byThisLaunch =
        withdrawal?.launch?.executionId === executionId && withdrawal.launch.launchId === step.nodeId;
      if (withdrawn && executionId !== parent.rootExecutionId && !byThisLaunch) throw error;
      if (withdrawn) return record({ ...base, withdrawn: true });
      keepThrown(`${launchKey}/${task.index}`, error);
      const e = error as { name?: string; code?: string; message?: string };
      const failure: BranchFailure = {
        index: task.index,
        branch: task.agent,
        error: { name: e.name ?? "Error", code: e.code, message: e.message ?? String(error) },
      };
      // Its questions can no longer be answered: withdrawn now, by this launch, so that none stays
      // pending after the execution ends (the launch may go on without this branch). Its channel is told
      // of one it asked, never of one whose send threw. A store fault or a lost lease here stops the pass
      // as in the branch itself (recovery runs the branch again); anything else is logged.
      try {
        await closePending(services, {
          tenantId: parent.tenant.tenantId,
          rootExecutionId: parent.rootExecutionId,
          resolution: PauseResolution.Withdrawn,
          fence: config === undefined ? undefined : fenceOf(config),
          filter: (pause) => withinBranch(pause.step.branch, branch),
          answerOf: () => ({ withdrawnBy: { executionId, launchId: step.nodeId } }),
        });
      } catch (closing) {
        if (stopsThePass(closing, parent.signal)) throw closing;
        services.logger.log({
          level: LogLevel.Warn,
          event: "launch.branch-pauses-not-closed",
          message: `The failed branch ${task.index} of launch "${step.nodeId}" could not close its pending questions: ${closing instanceof Error ? closing.message : String(closing)}. They stay pending until the execution is cancelled.`,
          fields: { executionId, launchId: step.nodeId, index: task.index },
          at: services.clock.now(),
        });
      }
      // Then, under FailFast, the siblings still to get a slot learn which of them had asked (see above).
      // Read once: a branch asks only once it has its slot. When the read fails they start as before.
      if (failsFast(step) && slot.pool.failed === undefined && slot.pool.waiting.length > 0) {
        try {
          const asked = await branchesThatAsked(services, parent, step.nodeId);
          slot.pool.failed = { asked, failure };
        } catch (reading) {
          if (stopsThePass(reading, parent.signal)) throw reading;
        }
      }
      return record({ ...base, error: failure.error });
    } finally {
      slot.release();
    }
  };
}

/**
 * The branches of a launch (their indexes) under which the tree holds a question, whatever became of it
 * (waiting, answered, taken, withdrawn): those that started, in this pass or an earlier one.
 */
async function branchesThatAsked(
  services: RuntimeServices,
  parent: ExecutionFrame,
  launchId: string,
): Promise<Set<number>> {
  const above: BranchPath = { launches: parent.branch?.launches ?? [] };
  const depth = above.launches.length;
  const pauses = await services.store.pauses.list({
    tenantId: parent.tenant.tenantId,
    rootExecutionId: parent.rootExecutionId,
  });
  const asked = new Set<number>();
  for (const pause of pauses) {
    const at = pause.step.branch?.launches[depth];
    if (
      at !== undefined &&
      at.executionId === parent.executionId &&
      at.launchId === launchId &&
      withinBranch(pause.step.branch, above)
    ) {
      asked.add(at.index);
    }
  }
  return asked;
}

/** Whether `path` (a pause's branch) is `branch` or lies inside it (a child flow's launch under it). */
function withinBranch(path: BranchPath | undefined, branch: BranchPath): boolean {
  const launches = path?.launches;
  if (launches === undefined || launches.length < branch.launches.length) return false;
  return branch.launches.every((launch, at) => {
    const other = launches[at];
    return (
      other !== undefined &&
      other.executionId === launch.executionId &&
      other.launchId === launch.launchId &&
      other.index === launch.index
    );
  });
}

/**
 * Whether a branch's error says nothing about its work: the pass itself was stopped (its signal aborted
 * by a cancel, the app closing or a lost lease), or it lost its store or its lease. The pass handles
 * those as it does outside a launch (the tree is left for recovery, or ended by the cancel); kept as the
 * branch's result, they would fail the launch for good and withdraw its siblings' questions.
 */
function stopsThePass(error: unknown, signal: AbortSignal): boolean {
  return signal.aborted || isStoreFault(error) || isLeaseLost(error);
}

/**
 * Joins a launch: with every branch ended (finished, failed or withdrawn), hands on `{ results }`, or the
 * failure — the very error a branch threw under FailFast, or a JoinDeadlineError — to the first matching
 * `.onJoinError(…)` handler, else fails the execution with it.
 * @internal
 */
export function joinNode(services: RuntimeServices, step: LaunchStep) {
  return (state: FlowStateValue): FlowStateUpdate => {
    const launch = state.run.launches[step.nodeId];
    const results = Object.values(launch?.results ?? {}).sort((a, b) => a.index - b.index);
    const { executionId, tenant } = frame();
    const { tenantId } = tenant;
    if (step.quorum !== undefined)
      return quorumJoin(services, { step, quorum: step.quorum, launch, tenantId, executionId });
    let failure: unknown;
    // The failed branch's own result, else the failure a sibling it kept from starting recorded for it.
    const failed: BranchFailure | undefined =
      (results.find((r) => r.error !== undefined) as BranchFailure | undefined) ??
      results.find((r) => r.withdrawnFor !== undefined)?.withdrawnFor;
    if (
      (step.options.failurePolicy ?? FailurePolicy.FailFast) === FailurePolicy.FailFast &&
      failed !== undefined
    ) {
      failure =
        keptThrown(`${tenantId}/${executionId}/${step.nodeId}/${failed.index}`) ??
        new StepFailedError(
          step.nodeId,
          `Branch ${failed.index} (${failed.branch}) failed: ${failed.error?.message ?? ""}`,
          {
            ...(failed.error?.code === undefined ? {} : { code: failed.error.code }),
          },
        );
    } else if (
      step.options.deadline !== undefined &&
      launch !== undefined &&
      results.some((r) => r.withdrawn === true) &&
      services.clock.now() - launch.startedAt >= toMilliseconds(step.options.deadline)
    ) {
      failure = new JoinDeadlineError(step.nodeId, toMilliseconds(step.options.deadline));
    }
    for (const r of results) thrownByBranch.delete(`${tenantId}/${executionId}/${step.nodeId}/${r.index}`);
    if (failure === undefined) return { run: { outputs: { [step.nodeId]: { results } } } };
    const handler = step.onJoinError.find((h) => hasCause(failure, h.type));
    if (handler === undefined) throw failure;
    return {
      run: { outputs: { [step.nodeId]: handler.handle(failure, findCause(failure, handler.type) as never) } },
    };
  };
}

// Quorum joins. A launch's clock and input are taken when its nodes are built, so a branch can stamp
// when it ended (the order branches ended in decides which counted) and a launch can note how many
// branches it sent (to tell when max can no longer be reached).
const clocks = new WeakMap<LaunchStep, Clock>();
const inputs = new WeakMap<LaunchStep, (s: FlowStateValue) => unknown>();
let endSeq = 0;

/** A quorum launch's branch result, stamped with when it ended. */
function ended(step: LaunchStep, result: BranchResult): BranchResult {
  if (step.quorum === undefined) return result;
  endSeq += 1;
  return { ...result, endedAt: clocks.get(step)?.now(), endSeq };
}

/** How many branches a quorum launch sends from this state; undefined when not known. */
function branchCountOf(step: LaunchStep, state: FlowStateValue): number | undefined {
  const inputOf = inputs.get(step);
  if (step.quorum === undefined || inputOf === undefined) return undefined;
  try {
    const routed = launchRouter(step, inputOf)(state);
    return Array.isArray(routed) ? routed.length : 0;
  } catch {
    return undefined; // the router fails the same way right after, where it belongs
  }
}

function quorumLaunchOf(launch: LaunchState | undefined): QuorumLaunch {
  return {
    startedAt: launch?.startedAt ?? 0,
    branches: launch?.branches,
    results: Object.values(launch?.results ?? {}),
  };
}

/** A quorum launch is decided; a predicate that throws counts as decided, so the join reports it. */
function quorumDecided(step: LaunchStep, quorum: Quorum, launch: LaunchState, now: number): boolean {
  try {
    return evaluateQuorum(
      quorum,
      quorumLaunchOf(launch),
      now,
      quorumDeadlineMs(quorum, step.options.deadline),
    ).decided;
  } catch {
    return true;
  }
}

/** The join of a quorum launch: its outcome and verdicts, or a predicate's failure to `.onJoinError(…)`. */
function quorumJoin(
  services: RuntimeServices,
  join: {
    readonly step: LaunchStep;
    readonly quorum: Quorum;
    readonly launch: LaunchState | undefined;
    readonly tenantId: string;
    readonly executionId: string;
  },
): FlowStateUpdate {
  const { step, quorum, launch, tenantId, executionId } = join;
  for (const key of Object.keys(launch?.results ?? {}))
    thrownByBranch.delete(`${tenantId}/${executionId}/${step.nodeId}/${key}`);
  let failure: unknown;
  try {
    const output = quorumJoinOutput(
      quorum,
      quorumLaunchOf(launch),
      services.clock.now(),
      quorumDeadlineMs(quorum, step.options.deadline),
    );
    return { run: { outputs: { [step.nodeId]: output } } };
  } catch (error) {
    failure = new StepFailedError(
      step.nodeId,
      `The quorum of ${step.nodeId} could not judge its branches: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  const handler = step.onJoinError.find((h) => hasCause(failure, h.type));
  if (handler === undefined) throw failure;
  return {
    run: { outputs: { [step.nodeId]: handler.handle(failure, findCause(failure, handler.type) as never) } },
  };
}
