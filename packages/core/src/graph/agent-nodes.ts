import { END, Send, START, StateGraph } from "@langchain/langgraph";
import type { AssembledAgent, AssembledTool } from "../assembly/assembled-application.js";
import { BudgetExceededError } from "../budgets/budget-exceeded-error.js";
import { ExecutionContext, type StepContext } from "../container/execution-context.js";
import { WorkflowFinishTextDto } from "../dto/builtin-dtos.js";
import { dtoJsonSchema } from "../dto/dto.js";
import { maskWith } from "../dto/sensitive.js";
import { AgbossError } from "../errors/agboss-error.js";
import { ErrorCode } from "../errors/error-codes.js";
import { AgentFailedError } from "../errors/step-failed-error.js";
import type { ChatMessage, ChatToolCall, ChatToolSpec } from "../models/chat-model.js";
import { ANSWER_TOOL_NAME } from "../models/scripted-chat-model.js";
import type { ToolResult } from "../pauses/pause-record.js";
import { declinedTurnMessages } from "../pii/declined-turn.js";
import { PiiRefusedError } from "../pii/pii-refused-error.js";
import { PiiUnknownTokenError } from "../pii/pii-unknown-token-error.js";
import type { BranchPath } from "../records/branch-path.js";
import type { ExecutionStep } from "../records/execution-record.js";
import { interpreterSpendStep } from "../services/interpreter-spend-step.js";
import { callChatModel } from "../services/model-call.js";
import type { RuntimeServices } from "../services/runtime-services.js";
import { confirmLease } from "../services/tree-lease.js";
import { type Fence, fenceOf } from "../store/fence.js";
import { AgentState, type AgentStateUpdate, type AgentStateValue } from "./agent-state.js";
import { type Approval, awaitApproval } from "./ask-and-wait.js";
import type { LoopState } from "./flow-state.js";
import { runTool } from "./run-tool.js";
import { stepRecord } from "./step-record.js";

const DEFAULT_MAX_ITERATIONS = 10;
const DEFAULT_MAX_VALIDATION_ATTEMPTS = 2;

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
}

function renderInput(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "object" && value !== null && Object.keys(value).length === 1 && "text" in value) {
    return String((value as { text: unknown }).text);
  }
  return JSON.stringify(value, null, 2);
}

function issuesText(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string {
  return issues
    .map((i) => `${i.path.length === 0 ? "(value)" : i.path.map(String).join(".")}: ${i.message}`)
    .join("; ");
}

function currentFrame() {
  const frame = ExecutionContext.current();
  if (frame === undefined) throw new Error("AGBoss nodes run only inside an execution frame");
  return frame;
}

/** The tools an agent offers its model, plus the answer tool when it answers with a DTO. @internal */
export function toolSpecs(agent: AssembledAgent): ChatToolSpec[] {
  const specs: ChatToolSpec[] = [...agent.tools.values()].map((t) => ({
    name: t.name,
    description: t.options.description,
    parameters: dtoJsonSchema(t.options.input),
  }));
  if (agent.options.output !== undefined && agent.options.output !== WorkflowFinishTextDto) {
    specs.push({
      name: ANSWER_TOOL_NAME,
      description: `Give your final answer as ${agent.options.output.name}. Call it once, alone, when you are done.`,
      parameters: dtoJsonSchema(agent.options.output),
    });
  }
  return specs;
}

/**
 * The model turn of an agent's loop: opens a visit with the step's input, asks the model, and decides
 * where the loop goes (the tools, another try at a valid answer, or the next step).
 * @internal
 */
export function agentModelNode(services: RuntimeServices, agent: AssembledAgent) {
  const maxIterations = agent.options.maxToolLoopIterations ?? DEFAULT_MAX_ITERATIONS;
  const maxValidation = agent.options.maxValidationAttempts ?? DEFAULT_MAX_VALIDATION_ATTEMPTS;
  const specs = toolSpecs(agent);
  const structured = specs.some((s) => s.name === ANSWER_TOOL_NAME);
  return async (state: AgentStateValue): Promise<AgentStateUpdate> => {
    const frame = currentFrame();
    const nodeId = state.nodeId;
    const previous = state.loop;
    const conversation = [...state.history, ...state.messages];
    const added: ChatMessage[] = [];
    let loop: LoopState;
    if (previous?.active === true) {
      loop = { ...previous, iteration: previous.iteration + 1 };
    } else {
      if (conversation.length === 0) added.push({ role: "system", content: agent.options.prompt });
      added.push({ role: "user", content: renderInput(state.input) });
      loop = {
        visit: state.visit,
        iteration: 1,
        validationAttempts: 0,
        active: true,
        route: "done",
      };
    }
    if (loop.iteration > maxIterations) {
      throw new AgentFailedError(
        agent.name,
        nodeId,
        `its tool loop reached ${maxIterations} model turns without an answer.`,
        {
          code: ErrorCode.AgentLoopLimit,
        },
      );
    }
    const caller = `agent:${agent.name}`;
    let declined: PiiUnknownTokenError | undefined;
    let response: Awaited<ReturnType<Awaited<ReturnType<typeof services.models.resolve>>["invoke"]>>;
    try {
      response = await callChatModel(services, {
        component: agent.cls,
        modelId: agent.options.model,
        scope: {
          tenantId: frame.tenant.tenantId,
          rootExecutionId: frame.rootExecutionId,
          executionId: frame.executionId,
          workflow: frame.workflow.name,
        },
        request: {
          model: agent.options.model,
          messages: [...conversation, ...added],
          tools: specs,
          toolChoice: structured ? "required" : "auto",
          caller,
          signal: frame.signal,
        },
      });
    } catch (error) {
      if (error instanceof AgbossError && error.code === ErrorCode.ModelUnserved) throw error;
      if (error instanceof BudgetExceededError || error instanceof PiiRefusedError) throw error;
      if (!(error instanceof PiiUnknownTokenError)) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new AgentFailedError(agent.name, nodeId, `its model call failed: ${reason}`, { cause: error });
      }
      declined = error;
      response = error.response;
    }
    added.push({ role: "assistant", content: response.content, toolCalls: response.toolCalls });
    const modelStep: ExecutionStep = {
      type: "model",
      step: stepRecord(agent, nodeId, loop, undefined, state.branch ?? undefined),
      model: agent.options.model,
      usage: response.usage,
      calledTools: response.toolCalls.map((c) => c.name),
      at: new Date(services.clock.now()).toISOString(),
      caller,
    };
    if (declined !== undefined) {
      // A token that stands for no value declines the whole turn: the model reads why and tries again.
      added.push(...declinedTurnMessages(declined));
      loop = { ...loop, validationAttempts: loop.validationAttempts + 1, route: "retry" };
      if (loop.validationAttempts > maxValidation) {
        throw new AgentFailedError(agent.name, nodeId, "its model kept answering with unknown PII tokens.", {
          cause: declined,
        });
      }
      return { messages: added, loop, steps: [modelStep] };
    }
    const workCalls = response.toolCalls.filter((c) => c.name !== ANSWER_TOOL_NAME);
    const answerCall = response.toolCalls.find((c) => c.name === ANSWER_TOOL_NAME);
    let output: unknown;
    if (workCalls.length > 0) {
      // Answer calls made alongside work are refused; the model answers again once the tools returned.
      for (const call of response.toolCalls.filter((c) => c.name === ANSWER_TOOL_NAME)) {
        added.push({
          role: "tool",
          toolCallId: call.id,
          name: call.name,
          content: "Tool error: answer alone, after your other tool calls returned.",
        });
      }
      loop = { ...loop, route: "tools" };
    } else {
      let failure: string | undefined;
      if (structured) {
        const answerDto = agent.options.output as NonNullable<typeof agent.options.output>;
        const parsed =
          answerCall === undefined ? undefined : answerDto.schema.safeParse(answerCall.arguments);
        if (parsed?.success === true) output = parsed.data;
        else
          failure =
            parsed === undefined
              ? `answer by calling ${ANSWER_TOOL_NAME}.`
              : `invalid answer: ${issuesText(parsed.error.issues)}`;
        if (failure !== undefined && answerCall !== undefined) {
          added.push({
            role: "tool",
            toolCallId: answerCall.id,
            name: ANSWER_TOOL_NAME,
            content: `Tool error: ${failure}`,
          });
        } else if (failure !== undefined) {
          added.push({ role: "user", content: `Your reply was not accepted: ${failure}` });
        }
      } else {
        output = { text: response.content };
      }
      if (failure === undefined) loop = { ...loop, active: false, route: "done" };
      else {
        loop = { ...loop, validationAttempts: loop.validationAttempts + 1, route: "retry" };
        if (loop.validationAttempts > maxValidation) {
          throw new AgentFailedError(
            agent.name,
            nodeId,
            `its model gave ${loop.validationAttempts} invalid answers; the last: ${failure}`,
          );
        }
      }
    }
    return { messages: added, loop, steps: [modelStep], ...(output === undefined ? {} : { output }) };
  };
}

/** Where the loop goes after a model turn. @internal */
export function agentRouter(state: AgentStateValue): string | Send[] {
  const loop = state.loop;
  if (loop?.route === "tools") {
    const last = [...state.messages].reverse().find((m) => m.role === "assistant");
    const calls =
      last?.role === "assistant" ? (last.toolCalls ?? []).filter((c) => c.name !== ANSWER_TOOL_NAME) : [];
    return calls.map(
      (call) =>
        new Send(AGENT_TOOLS_NODE, {
          nodeId: state.nodeId,
          call,
          loop,
          branch: state.branch,
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
      step: stepRecord(agent, nodeId, loop, call, task.branch),
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
 * earlier run kept is used as it is (the tool is not called again); otherwise the lease is confirmed in
 * the store first (a holder that lost its tree starts nothing), and the result is stored the moment the
 * tool returns, before anything else happens. A pass stopped from outside (its lease lost, the thread
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
  if (approval.pauseId !== undefined) await confirmLease(services, fence);
  let result: ToolResult;
  try {
    const value = await runTool(
      services,
      tool,
      approval.input,
      step,
      approval.kind === "answered" ? approval.answer : undefined,
    );
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
  const kept = await services.store.pauses.saveToolResult(
    currentFrame().tenant.tenantId,
    approval.pauseId,
    result,
    fence,
  );
  return kept?.toolResult ?? result;
}

/** Compiles an agent's tool loop as a subgraph; it checkpoints under its step's task. @internal */
export function compileAgentGraph(services: RuntimeServices, agent: AssembledAgent) {
  // biome-ignore lint/suspicious/noExplicitAny: node names are dynamic, which StateGraph's generics cannot express
  const graph = new StateGraph(AgentState) as unknown as StateGraph<any, any, any, string>;
  graph.addNode(AGENT_MODEL_NODE, agentModelNode(services, agent));
  graph.addNode(AGENT_TOOLS_NODE, agentToolNode(services, agent));
  graph.addEdge(START, AGENT_MODEL_NODE);
  graph.addConditionalEdges(AGENT_MODEL_NODE, agentRouter, [AGENT_MODEL_NODE, AGENT_TOOLS_NODE, END]);
  graph.addEdge(AGENT_TOOLS_NODE, AGENT_MODEL_NODE);
  return graph.compile();
}

/** A compiled agent subgraph. @internal */
export type CompiledAgentGraph = ReturnType<typeof compileAgentGraph>;
