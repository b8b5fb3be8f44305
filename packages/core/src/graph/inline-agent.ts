import { END, Send } from "@langchain/langgraph";
import type { AssembledAgent } from "../assembly/assembled-application.js";
import { ExecutionContext } from "../container/execution-context.js";
import type { ChatMessage } from "../models/chat-model.js";
import type { ExecutionStep } from "../records/execution-record.js";
import type { RuntimeServices } from "../services/runtime-services.js";
import {
  AGENT_TOOLS_NODE,
  agentModelNode,
  agentRouter,
  agentToolNode,
  type ToolTask,
} from "./agent-nodes.js";
import type { AgentStateValue } from "./agent-state.js";
import type { AgentVisitState, FlowStateUpdate, FlowStateValue, LoopState } from "./flow-state.js";

// A flow's own agent steps run their tool loop as nodes of the flow's graph: one superstep per model
// turn and one per round of tool calls, with no subgraph (and so no second checkpoint chain, state
// read or graph loop) per visit. The visit under way lives in the flow state's `visit` channel; its
// conversation before the visit and its input are read from the flow state, never copied into it.
// Branches of a parallel launch still run each visit as a subgraph (agent-step.ts): they run side by
// side, and a channel holds one visit.

/** The node that runs the tool calls of the agent step `nodeId`. @internal */
export const toolsNodeOf = (nodeId: string) => `${nodeId}/${AGENT_TOOLS_NODE}`;

/** An agent step of a flow, as {@link inlineAgentStep} needs it. */
interface InlineStep {
  readonly agent: AssembledAgent;
  readonly nodeId: string;
  /** What the step works on, read from the flow state. */
  readonly inputOf: (state: FlowStateValue) => unknown;
  /** The node after this step (`END` for the last). */
  readonly next: string;
}

/** The visit as the agent's nodes read it: what the flow state holds of it, plus what it reads elsewhere. */
function visitState(step: InlineStep, state: FlowStateValue, visit: AgentVisitState): AgentStateValue {
  return {
    nodeId: step.nodeId,
    visit: visit.visit,
    branch: ExecutionContext.current()?.branch,
    input: step.inputOf(state),
    history: state.conversations[step.nodeId] ?? [],
    messages: visit.messages,
    loop: visit.loop,
    steps: visit.steps,
    output: visit.output,
  };
}

/** What an agent node returns (its nodes never overwrite a channel). */
interface NodeUpdate {
  readonly messages?: readonly ChatMessage[];
  readonly steps?: readonly ExecutionStep[];
  readonly loop?: LoopState | undefined;
  readonly output?: unknown;
}

/** A visit with an agent node's update applied, as the subgraph's reducers would apply it. */
function applied(visit: AgentVisitState, update: NodeUpdate): AgentVisitState {
  return {
    visit: visit.visit,
    messages: update.messages === undefined ? visit.messages : [...visit.messages, ...update.messages],
    steps: update.steps === undefined ? visit.steps : [...visit.steps, ...update.steps],
    loop: "loop" in update ? update.loop : visit.loop,
    output: "output" in update ? update.output : visit.output,
  };
}

/**
 * The nodes and routing of one agent step: the model turn at `nodeId` (which opens a visit when none
 * is under way, and closes it into the flow state when the agent answered), its tool calls at
 * {@link toolsNodeOf}, one task each, and the route after each turn. @internal
 */
export function inlineAgentStep(services: RuntimeServices, step: InlineStep) {
  const modelTurn = agentModelNode(services, step.agent);
  const toolCall = agentToolNode(services, step.agent);
  const model = async (state: FlowStateValue): Promise<FlowStateUpdate> => {
    const open: AgentVisitState = state.visit ?? {
      visit: (state.run.visits[step.nodeId] ?? 0) + 1,
      messages: [],
      steps: [],
      loop: undefined,
      output: undefined,
    };
    const after = applied(open, (await modelTurn(visitState(step, state, open))) as NodeUpdate);
    if (after.loop?.route === "tools" || after.loop?.route === "retry") {
      return { visit: { set: after } };
    }
    return {
      visit: { set: null },
      conversations: { [step.nodeId]: after.messages },
      run: {
        outputs: { [step.nodeId]: after.output },
        steps: after.steps,
        visits: { [step.nodeId]: after.visit },
      },
    };
  };
  const tools = async (
    task: ToolTask,
    config?: { configurable?: Record<string, unknown> },
  ): Promise<FlowStateUpdate> => ({ visit: { add: (await toolCall(task, config)) as NodeUpdate } });
  const route = (state: FlowStateValue): string | Send[] => {
    if (state.visit === null) return step.next;
    const routed = agentRouter(visitState(step, state, state.visit));
    if (routed === END) return step.next;
    if (typeof routed === "string") return step.nodeId;
    return routed.map((send) => new Send(toolsNodeOf(step.nodeId), send.args));
  };
  return { model, tools, route, destinations: [step.nodeId, toolsNodeOf(step.nodeId), step.next] };
}
