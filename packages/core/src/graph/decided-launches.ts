import type { AssembledFlow } from "../assembly/assembled-application.js";
import type { AnyClass } from "../container/component-registry.js";
import type { FlowStateValue } from "./flow-state.js";
import { branchNodeOf, launchDecided } from "./launch-nodes.js";

/** A launch, named by the execution it belongs to (launch ids repeat across flows). @internal */
export interface LaunchKey {
  readonly executionId: string;
  readonly launchId: string;
}

/** The part of a LangGraph state snapshot the walk reads. @internal */
export interface FlowSnapshot {
  readonly values: unknown;
  readonly tasks: readonly {
    readonly id: string;
    readonly name: string;
    readonly interrupts?: readonly unknown[];
  }[];
}

/** Reads a flow's state at a checkpoint namespace (a child execution's, under its parent's task). @internal */
export type ReadFlowState = (start: AnyClass, checkpointNs: string) => Promise<FlowSnapshot>;

/** The child flows a node of `flow` may run: a `toWorkflow` step's, or a launch's child branches'. */
function childStartsOf(flow: AssembledFlow, node: string): readonly AnyClass[] {
  for (const step of flow.steps) {
    if (step.kind === "workflow" && step.nodeId === node) return [step.start];
    if (step.kind === "parallel" && branchNodeOf(step.nodeId) === node && step.workflows.length > 0) {
      // A per-item launch runs its one child flow for every item; otherwise branch i runs workflows[i].
      return step.items === undefined ? step.workflows : step.workflows.slice(0, 1);
    }
  }
  return [];
}

const launchHolders = new WeakMap<AssembledFlow, boolean>();

/** Whether `flow` or a child flow of it, at any depth, has a parallel launch. @internal */
export function flowHoldsLaunch(flow: AssembledFlow, flowOf: (start: AnyClass) => AssembledFlow): boolean {
  const known = launchHolders.get(flow);
  if (known !== undefined) return known;
  launchHolders.set(flow, false); // assembly refuses cycles; this only keeps a bad graph from looping
  const holds = flow.steps.some(
    (step) =>
      step.kind === "parallel" || (step.kind === "workflow" && flowHoldsLaunch(flowOf(step.start), flowOf)),
  );
  launchHolders.set(flow, holds);
  return holds;
}

/**
 * Every launch of an execution tree that no longer needs its unfinished branches (a FailFast failure,
 * a passed deadline, a decided quorum): the root's, read from `root`, and those inside child
 * executions at any depth, read from the checkpoints the children keep under the tasks that wait on
 * them. Only interrupted tasks are followed, and only into flows that can hold a launch.
 * @internal
 */
export async function decidedLaunches(args: {
  readonly flow: AssembledFlow;
  readonly root: FlowSnapshot;
  readonly now: number;
  readonly flowOf: (start: AnyClass) => AssembledFlow;
  readonly read: ReadFlowState;
}): Promise<LaunchKey[]> {
  const { now, flowOf, read } = args;
  const holdsLaunch = (flow: AssembledFlow) => flowHoldsLaunch(flow, flowOf);
  /** Whether a child of `flow` (at any depth) holds a launch: only then are its tasks worth reading. */
  const childrenHoldLaunch = (flow: AssembledFlow): boolean =>
    flow.steps.some(
      (step) =>
        (step.kind === "workflow" && holdsLaunch(flowOf(step.start))) ||
        (step.kind === "parallel" && step.workflows.some((start) => holdsLaunch(flowOf(start)))),
    );

  const decided: LaunchKey[] = [];
  const visit = async (flow: AssembledFlow, snapshot: FlowSnapshot, ns: string): Promise<void> => {
    const state = snapshot.values as FlowStateValue | undefined;
    const executionId = state?.run?.executionId;
    if (state === undefined || executionId === undefined) return;
    for (const step of flow.steps) {
      if (step.kind === "parallel" && launchDecided(step, state, now)) {
        decided.push({ executionId, launchId: step.nodeId });
      }
    }
    if (!childrenHoldLaunch(flow)) return;
    for (const task of snapshot.tasks) {
      if ((task.interrupts?.length ?? 0) === 0) continue;
      const starts = childStartsOf(flow, task.name);
      const first = starts[0];
      if (first === undefined) continue;
      const childNs = `${ns === "" ? "" : `${ns}|`}${task.name}:${task.id}`;
      // Every flow shares one state shape, so any candidate reads the child's id; its index names the flow.
      let start = first;
      let child = await read(start, childNs);
      if (starts.length > 1) {
        const childId = (child.values as FlowStateValue | undefined)?.run?.executionId ?? "";
        const right = starts[Number(childId.slice(childId.lastIndexOf("/") + 1))];
        if (right !== undefined && right !== start) {
          start = right;
          child = await read(start, childNs);
        }
      }
      await visit(flowOf(start), child, childNs);
    }
  };
  await visit(args.flow, args.root, "");
  return decided;
}
