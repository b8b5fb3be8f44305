import type { AssembledFlow } from "../assembly/assembled-application.js";
import { ExecutionContext, type ExecutionFrame } from "../container/execution-context.js";
import { parseDto } from "../dto/dto.js";
import { maskWith } from "../dto/sensitive.js";
import type { BranchPath } from "../records/branch-path.js";
import type { ExecutionStep } from "../records/execution-record.js";
import { finishOutput } from "./finish-output.js";
import type { ChildSummary, FlowStateValue } from "./flow-state.js";

/** A compiled child flow, run as a subgraph. @internal */
export interface ChildGraph {
  invoke(input: unknown): Promise<unknown>;
}

/**
 * Runs a child flow inside the current task, as its own execution (same root, same thread, same
 * owner): its pauses carry its execution id, and on a resume it goes on from its own checkpoint.
 * @internal
 */
export async function runChild(
  flow: AssembledFlow,
  graph: ChildGraph,
  args: { childId: string; input: unknown; branch: BranchPath | undefined; itemIndex?: number | undefined },
): Promise<{ output: unknown; summary: ChildSummary; steps: readonly ExecutionStep[] }> {
  const parent = ExecutionContext.current() as ExecutionFrame;
  const input = parseDto(flow.start.input, args.input, `the input of child workflow ${flow.workflow.name}`);
  const frame: ExecutionFrame = {
    ...parent,
    executionId: args.childId,
    workflow: { name: flow.workflow.name, version: flow.workflow.version },
    step: undefined,
    branch: args.branch,
  };
  const out = finishOutput(
    flow,
    (await ExecutionContext.run(frame, () =>
      graph.invoke({ run: { reset: { executionId: args.childId, input } } }),
    )) as FlowStateValue,
  );
  const summary: ChildSummary = {
    executionId: args.childId,
    parentExecutionId: parent.executionId,
    workflow: frame.workflow,
    start: flow.start.name,
    itemIndex: args.itemIndex,
    output: maskWith(flow.finish.output.schema, out.run.output),
    steps: out.run.steps,
    children: Object.values(out.run.children ?? {}),
  };
  return { output: out.run.output, summary, steps: [] };
}
