import { type AnyClass, componentOf } from "../container/component-registry.js";
import type { FlowDefinition, FlowStep } from "../flow/flow-definition.js";
import { quorumProblems } from "../flow/quorum-problems.js";
import { assembleAgent } from "./assemble-agents.js";
import type { AssembledAgent, AssembledStep } from "./assembled-application.js";
import type { AssemblyContext } from "./assembly-context.js";

/** A child workflow a flow runs, given by the parent's start and the child's start. */
export interface ChildRef {
  readonly parent: AnyClass;
  readonly child: AnyClass;
}

/** The steps of one flow, as {@link assembleSteps} reads them. */
export interface StepsUse {
  readonly flow: FlowDefinition;
  /** The workflow's name, for the messages. */
  readonly workflowName: string;
  /** Where every child workflow a step runs is noted, to be checked once all flows are known. */
  readonly childRefs: ChildRef[];
}

/**
 * Checks a flow's steps and gives each its graph node id: `agent/<name>` and `workflow/<name>` (with
 * `#2`, `#3`, … when a flow runs the same one again) and `launch/<n>` for the n-th parallel launch. A
 * step whose agent does not assemble is left out (its violation is reported).
 */
export function assembleSteps(ctx: AssemblyContext, use: StepsUse): AssembledStep[] {
  const { flow, childRefs } = use;
  const steps: AssembledStep[] = [];
  const seen = new Map<string, number>();
  /** How many times `key` was seen in this flow, counting this one. */
  const nth = (key: string) => {
    const count = (seen.get(key) ?? 0) + 1;
    seen.set(key, count);
    return count;
  };
  let launches = 0;
  for (const step of flow.steps) {
    if (step.kind === "workflow") {
      const childName = componentOf<{ name?: string }>(step.start)?.options.name ?? step.start.name;
      const count = nth(`workflow:${childName}`);
      childRefs.push({ parent: flow.start, child: step.start });
      steps.push({
        kind: "workflow",
        nodeId: count === 1 ? `workflow/${childName}` : `workflow/${childName}#${count}`,
        start: step.start,
      });
      continue;
    }
    if (step.kind === "parallel") {
      launches += 1;
      const launch = assembleLaunch(ctx, { ...use, step, nodeId: `launch/${launches}` });
      if (launch !== undefined) steps.push(launch);
      continue;
    }
    const agent = assembleAgent(ctx, step.agent);
    if (agent === undefined) continue;
    const count = nth(agent.name);
    steps.push({
      kind: "agent",
      agent,
      nodeId: count === 1 ? `agent/${agent.name}` : `agent/${agent.name}#${count}`,
    });
  }
  return steps;
}

/**
 * Checks a parallel launch: its agents, that it has branches, its maxConcurrency and its quorum. Its
 * child workflows are noted in `childRefs`. Undefined when one of its agents does not assemble.
 */
function assembleLaunch(
  ctx: AssemblyContext,
  use: StepsUse & { readonly step: Extract<FlowStep, { kind: "parallel" }>; readonly nodeId: string },
): AssembledStep | undefined {
  const { flow, workflowName, childRefs, step, nodeId } = use;
  const agents = step.agents
    .map((a) => assembleAgent(ctx, a))
    .filter((a): a is AssembledAgent => a !== undefined);
  const workflows = step.workflows ?? [];
  for (const child of workflows) childRefs.push({ parent: flow.start, child });
  if (step.agents.length === 0 && workflows.length === 0)
    ctx.add("flow.empty-launch", `A parallel launch of ${workflowName} has no branches.`);
  const max = step.options.maxConcurrency;
  if (max !== undefined && (!Number.isInteger(max) || max < 1)) {
    ctx.add(
      "flow.max-concurrency",
      `A parallel launch of ${workflowName} has maxConcurrency ${String(max)}; use a whole number of at least 1.`,
    );
  }
  // A quorum's max is checked against the branch count when it is known before running (not per item).
  const known = step.items === undefined && step.agents.length > 0 ? step.agents.length : undefined;
  for (const problem of step.quorum === undefined ? [] : quorumProblems(step.quorum, known))
    ctx.add("flow.quorum", `A parallel launch of ${workflowName}: ${problem}`);
  if (agents.length !== step.agents.length) return undefined;
  return {
    kind: "parallel",
    nodeId,
    agents,
    workflows,
    items: step.items,
    options: step.options,
    quorum: step.quorum,
    onJoinError: step.onJoinError,
  };
}
