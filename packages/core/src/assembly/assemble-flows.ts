import type { WorkflowFinishOptions, WorkflowOptions, WorkflowStartOptions } from "../components/workflow.js";
import { ComponentKind } from "../container/component-kind.js";
import { type AnyClass, componentOfKind, describeClass } from "../container/component-registry.js";
import { isDtoClass } from "../dto/dto.js";
import type { FlowDefinition } from "../flow/flow-definition.js";
import { assembleSteps, type ChildRef } from "./assemble-steps.js";
import type { AssembledFlow } from "./assembled-application.js";
import type { AssemblyContext } from "./assembly-context.js";

/**
 * Checks the application's workflows and builds their flows, keyed by each flow's start; then checks the
 * child workflows the flows run: each begins some flow of the application, and none runs itself.
 */
export function assembleWorkflows(
  ctx: AssemblyContext,
  workflows: readonly AnyClass[],
): Map<AnyClass, AssembledFlow> {
  const flows = new Map<AnyClass, AssembledFlow>();
  const childRefs: ChildRef[] = [];
  for (const wfClass of workflows) {
    const wm = componentOfKind<WorkflowOptions>(wfClass, ComponentKind.Workflow);
    if (wm === undefined) {
      ctx.add(
        "workflow.not-a-workflow",
        `${describeClass(wfClass)} is listed in workflows but has no @Workflow({ … }) decorator.`,
      );
      continue;
    }
    ctx.checkName(wfClass);
    for (const flow of wm.options.flow) {
      assembleFlow(ctx, { workflow: wfClass, options: wm.options, flow, flows, childRefs });
    }
  }
  checkChildWorkflows(ctx, flows, childRefs);
  return flows;
}

/** One flow of a workflow, as {@link assembleFlow} reads it. */
interface FlowUse {
  readonly workflow: AnyClass;
  readonly options: WorkflowOptions;
  readonly flow: FlowDefinition;
  /** The flows built so far; this one is added when its start and finish are sound. */
  readonly flows: Map<AnyClass, AssembledFlow>;
  /** Where every child workflow a step runs is noted. */
  readonly childRefs: ChildRef[];
}

/** Checks one flow (its start, its finish, its steps) and adds it to `flows` when its start and finish are sound. */
function assembleFlow(ctx: AssemblyContext, use: FlowUse): void {
  const { workflow, options, flow, flows, childRefs } = use;
  const sm = componentOfKind<WorkflowStartOptions>(flow.start, ComponentKind.WorkflowStart);
  const fm = componentOfKind<WorkflowFinishOptions>(flow.finish, ComponentKind.WorkflowFinish);
  if (sm === undefined)
    ctx.add(
      "flow.not-a-start",
      `${describeClass(flow.start)} begins a flow of ${options.name} but has no @WorkflowStart.`,
    );
  else checkStart(ctx, use, sm.options);
  if (fm === undefined)
    ctx.add(
      "flow.not-a-finish",
      `${describeClass(flow.finish)} ends a flow of ${options.name} but has no @WorkflowFinish.`,
    );
  else {
    ctx.checkName(flow.finish);
    if (!isDtoClass(fm.options.output))
      ctx.add("dto.not-a-dto", `${describeClass(flow.finish)}'s output must be a DTO class.`);
  }
  if (flow.steps.length === 0)
    ctx.add(
      "flow.no-steps",
      `A flow of ${options.name} goes from start to finish with no step; add toAgent(…).`,
    );
  const steps = assembleSteps(ctx, { flow, workflowName: options.name, childRefs });
  if (sm !== undefined && fm !== undefined) {
    flows.set(flow.start, {
      workflow: { cls: workflow, name: options.name, version: options.version },
      start: { cls: flow.start, name: sm.options.name, input: sm.options.input },
      steps,
      finish: { cls: flow.finish, name: fm.options.name, output: fm.options.output },
    });
  }
}

/** Checks a flow's start: its input is a DTO that matches `.returns(…)`, and no other flow begins with it. */
function checkStart(ctx: AssemblyContext, use: FlowUse, start: WorkflowStartOptions): void {
  const { options, flow, flows } = use;
  ctx.checkName(flow.start);
  if (!isDtoClass(start.input))
    ctx.add("dto.not-a-dto", `${describeClass(flow.start)}'s input must be a DTO class.`);
  else if (flow.returns !== undefined && flow.returns !== start.input) {
    ctx.add(
      "flow.returns-mismatch",
      `${options.name}: start(${flow.start.name}).returns(${flow.returns.name}) but the start's input is ${start.input.name}.`,
    );
  }
  if (flows.has(flow.start))
    ctx.add(
      "flow.duplicate-start",
      `${describeClass(flow.start)} begins two flows; give each flow its own start.`,
    );
}

/**
 * Checks the child workflows the flows run: each must begin a flow of the application, and no chain of
 * children may lead back to a flow on it (reported once for each flow such a circle returns to).
 */
function checkChildWorkflows(
  ctx: AssemblyContext,
  flows: ReadonlyMap<AnyClass, AssembledFlow>,
  childRefs: readonly ChildRef[],
): void {
  for (const { parent, child } of childRefs) {
    if (!flows.has(child)) {
      ctx.add(
        "flow.unknown-child",
        `${describeClass(parent)}'s flow runs ${describeClass(child)} as a child workflow, but no workflow of the application begins with it; add its workflow to @Application({ workflows }).`,
      );
    }
  }
  const childrenOf = (start: AnyClass) => childRefs.filter((r) => r.parent === start).map((r) => r.child);
  const reported = new Set<AnyClass>();
  const walk = (start: AnyClass, path: readonly AnyClass[]) => {
    if (path.includes(start)) {
      if (!reported.has(start)) {
        reported.add(start);
        ctx.add(
          "flow.child-cycle",
          `Child workflows run in a circle: ${[...path, start].map((c) => c.name).join(" → ")}. A flow cannot run itself.`,
        );
      }
      return;
    }
    for (const child of childrenOf(start)) walk(child, [...path, start]);
  };
  for (const start of flows.keys()) walk(start, []);
}
