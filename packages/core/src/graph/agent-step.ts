import type { AssembledAgent } from "../assembly/assembled-application.js";
import type { ChatMessage } from "../models/chat-model.js";
import type { BranchPath } from "../records/branch-path.js";
import type { ExecutionStep } from "../records/execution-record.js";
import type { CompiledAgentGraph } from "./agent-nodes.js";

/** What one agent visit produced. @internal */
export interface AgentVisit {
  readonly messages: readonly ChatMessage[];
  readonly steps: readonly ExecutionStep[];
  readonly output: unknown;
}

/**
 * Runs one visit of an agent as its subgraph, inside the current task: on a resume the subgraph goes
 * on from its own checkpoint, so finished turns and tool calls are not run again.
 * @internal
 */
export async function runAgentVisit(
  graph: CompiledAgentGraph,
  args: {
    agent: AssembledAgent;
    nodeId: string;
    visit: number;
    input: unknown;
    history: readonly ChatMessage[];
    branch?: BranchPath;
  },
): Promise<AgentVisit> {
  const out = (await graph.invoke({
    nodeId: args.nodeId,
    visit: args.visit,
    input: args.input,
    history: args.history,
    branch: args.branch,
  })) as { messages: readonly ChatMessage[]; steps: readonly ExecutionStep[]; output: unknown };
  return { messages: out.messages, steps: out.steps, output: out.output };
}
