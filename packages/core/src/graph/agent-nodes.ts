import { END, Send, START, StateGraph } from "@langchain/langgraph";
import type { AssembledAgent, AssembledTool } from "../assembly/assembled-application.js";
import type { StepContext } from "../container/execution-context.js";
import { maskWith } from "../dto/sensitive.js";
import { isStoreFault } from "../errors/app-errors.js";
import type { ChatToolCall } from "../models/chat-model.js";
import { ANSWER_TOOL_NAME } from "../models/chat-model.js";
import type { ToolResult } from "../pauses/pause-record.js";
import type { BranchPath } from "../records/branch-path.js";
import type { ExecutionStep } from "../records/execution-record.js";
import { interpreterSpendStep } from "../services/interpreter-spend-step.js";
import type { RuntimeServices } from "../services/runtime-services.js";
import { confirmLease } from "../services/tree-lease.js";
import { type Fence, fenceOf } from "../store/fence.js";
import { agentModelNode } from "./agent-model-node.js";
import { currentFrame, issuesText } from "./agent-node-support.js";
import { AgentState, type AgentStateUpdate, type AgentStateValue } from "./agent-state.js";
import { type Approval, awaitApproval } from "./ask-and-wait.js";
import type { LoopState } from "./flow-state.js";
import { leanGraph } from "./lean-graphs.js";
import { routeOf } from "./route.js";
import { runTool } from "./run-tool.js";
import { stepRecord } from "./step-record.js";

// The model turn has its own module; it is exported here too, with the rest of the agent's subgraph.
export { agentModelNode, toolSpecs } from "./agent-model-node.js";

/** The model-turn node of an agent's subgraph. @internal */
export const AGENT_MODEL_NODE = "model";
/** The tool-call node of an agent's subgraph (one task per call). @internal */
export const AGENT_TOOLS_NODE = "tools";

/** What a tool task gets through its `Send`. @internal */
export interface ToolTask {
  readonly nodeId: string;
  readonly call: ChatToolCall;
  readonly loop: LoopState;
  readonly branch: BranchPath | undefined;
  /** The call's position among its model turn's calls. */
  readonly index?: number | undefined;
}

/** Where the loop goes after a model turn. @internal */
export function agentRouter(state: AgentStateValue): string | Send[] {
  const loop = state.loop;
  if (loop?.route === "tools") {
    const last = [...state.messages].reverse().find((m) => m.role === "assistant");
    const calls =
      last?.role === "assistant" ? (last.toolCalls ?? []).filter((c) => c.name !== ANSWER_TOOL_NAME) : [];
    return calls.map(
      (call, index) =>
        new Send(AGENT_TOOLS_NODE, {
          nodeId: state.nodeId,
          call,
          loop,
          branch: state.branch,
          index,
        } satisfies ToolTask),
    );
  }
  if (loop?.route === "retry") return AGENT_MODEL_NODE;
  return END;
}

/**
 * One tool call, as its own task: validates the model's arguments against the tool's input, runs the
 * tool, and answers the model. A failure becomes a `Tool error: …` the model reads.
 * @internal
 */
export function agentToolNode(services: RuntimeServices, agent: AssembledAgent) {
  return async (
    task: ToolTask,
    config?: { configurable?: Record<string, unknown> },
  ): Promise<AgentStateUpdate> => {
    const { nodeId, call, loop } = task;
    const tool: AssembledTool | undefined = agent.tools.get(call.name);
    let error: string | undefined;
    let output: unknown;
    let shownArgs: unknown = call.arguments;
    let approval: Approval | undefined;
    if (tool === undefined) {
      error = `there is no tool "${call.name}"; you can call ${[...agent.tools.keys()].join(", ") || "no tools"}.`;
    } else {
      shownArgs = maskWith(tool.options.input.schema, call.arguments);
      const parsed = tool.options.input.schema.safeParse(call.arguments);
      if (!parsed.success) {
        error = `invalid input for ${tool.name}: ${issuesText(parsed.error.issues)}`;
      } else {
        const step = {
          nodeId,
          agent: agent.name,
          callId: call.id,
          idempotencyKey: `${currentFrame().executionId}:${nodeId}:${loop.visit}:${call.id}`,
        };
        approval =
          tool.channel === undefined
            ? { kind: "approved", input: parsed.data }
            : await awaitApproval(services, {
                branch: task.branch,
                callIndex: task.index,
                agent,
                tool,
                call,
                input: parsed.data,
                nodeId,
                loop,
                step,
                fence: fenceOf(config),
              });
        if (approval.kind === "rejected") error = approval.message;
        else if (approval.kind === "withdrawn") error = "the call was withdrawn before anyone answered it.";
        else {
          if (approval.input !== parsed.data) shownArgs = maskWith(tool.options.input.schema, approval.input);
          const result = await callApprovedTool(services, { tool, approval, step, fence: fenceOf(config) });
          output = result.output;
          error = result.error;
        }
      }
    }
    const content = error === undefined ? JSON.stringify(output) : `Tool error: ${error}`;
    const toolStep: ExecutionStep = {
      type: "tool",
      step: stepRecord(agent, { nodeId, loop, call, callIndex: task.index, branch: task.branch }),
      tool: call.name,
      arguments: shownArgs,
      output:
        tool === undefined || output === undefined ? undefined : maskWith(tool.options.output.schema, output),
      error,
      ...(approval?.kind === "answered" && tool?.channel?.answer !== undefined
        ? { answer: maskWith(tool.channel.answer.schema, approval.answer) }
        : {}),
      at: new Date(services.clock.now()).toISOString(),
    };
    const interpreted = interpreterSpendStep(
      approval?.kind === "withdrawn" ? undefined : approval?.cost,
      toolStep.step,
      toolStep.at,
    );
    return {
      messages: [{ role: "tool", toolCallId: call.id, name: call.name, content }],
      steps: interpreted === undefined ? [toolStep] : [interpreted, toolStep],
    };
  };
}

/**
 * Calls a tool whose call may go on from a pause, and keeps how it ended on that pause. A result an
 * earlier run kept is used as it is (the tool is not called again); otherwise the lease is known current
 * in the store first (a holder that lost its tree starts nothing): proved by the fenced take of the pause
 * just before, or confirmed now. The result is stored the moment the tool returns, before anything else. A pass stopped from outside (its lease lost, the thread
 * cancelled, the app closed) ends here with that reason: it is not the tool's failure, and nothing is kept.
 */
async function callApprovedTool(
  services: RuntimeServices,
  args: {
    tool: AssembledTool;
    approval: Extract<Approval, { kind: "approved" | "answered" }>;
    step: StepContext;
    fence: Fence | undefined;
  },
): Promise<ToolResult> {
  const { tool, approval, step, fence } = args;
  if (approval.result !== undefined) return approval.result;
  // A pause this step took just now proved the lease current; any other (a take by an earlier run, an
  // answer given at once with an audit write since) confirms it before the tool starts.
  if (approval.pauseId !== undefined && approval.takenNow !== true) await confirmLease(services, fence);
  let result: ToolResult;
  try {
    const value = await runTool(services, {
      tool,
      input: approval.input,
      step,
      answer: approval.kind === "answered" ? approval.answer : undefined,
    });
    const checked = tool.options.output.schema.safeParse(value);
    result = checked.success
      ? { output: checked.data }
      : { error: `${tool.name} returned an invalid output: ${issuesText(checked.error.issues)}` };
  } catch (thrown) {
    const signal = currentFrame().signal;
    if (signal.aborted) throw signal.reason;
    result = { error: thrown instanceof Error ? thrown.message : String(thrown) };
  }
  if (approval.pauseId === undefined) return result;
  const tenantId = currentFrame().tenant.tenantId;
  const pauseId = approval.pauseId;
  const kept = await keepTrying(() => services.store.pauses.saveToolResult(tenantId, pauseId, result, fence));
  return kept?.toolResult ?? result;
}

/** How often, and how long apart, a tool's result is offered again to a store that could not be reached. */
const KEEP_RESULT_DELAYS_MS = [50, 200, 500, 1_000, 2_000];

/**
 * Runs an idempotent store write again while the store is unavailable (a lost connection, a commit
 * whose outcome is unknown): keeping a tool's result is safe to repeat (the first result stays), and
 * every retry here saves running the tool again on recovery. Other errors, and the last one, are thrown.
 */
async function keepTrying<T>(write: () => Promise<T>): Promise<T> {
  for (const delayMs of KEEP_RESULT_DELAYS_MS) {
    try {
      return await write();
    } catch (error) {
      if (!isStoreFault(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
  return write();
}

/** Compiles an agent's tool loop as a subgraph; it checkpoints under its step's task. @internal */
export function compileAgentGraph(services: RuntimeServices, agent: AssembledAgent) {
  // biome-ignore lint/suspicious/noExplicitAny: node names are dynamic, which StateGraph's generics cannot express
  const graph = new StateGraph(AgentState) as unknown as StateGraph<any, any, any, string>;
  graph.addNode(AGENT_MODEL_NODE, agentModelNode(services, agent));
  graph.addNode(AGENT_TOOLS_NODE, agentToolNode(services, agent));
  graph.addEdge(START, AGENT_MODEL_NODE);
  graph.addConditionalEdges(AGENT_MODEL_NODE, routeOf(agentRouter), [
    AGENT_MODEL_NODE,
    AGENT_TOOLS_NODE,
    END,
  ]);
  graph.addEdge(AGENT_TOOLS_NODE, AGENT_MODEL_NODE);
  return leanGraph(graph.compile());
}

/** A compiled agent subgraph. @internal */
export type CompiledAgentGraph = ReturnType<typeof compileAgentGraph>;
