import type { AssembledAgent } from "../assembly/assembled-application.js";
import { BudgetExceededError } from "../budgets/budget-exceeded-error.js";
import type { ExecutionFrame } from "../container/execution-context.js";
import { WorkflowFinishTextDto } from "../dto/builtin-dtos.js";
import { dtoJsonSchema } from "../dto/dto.js";
import { AgbossError } from "../errors/agboss-error.js";
import { ErrorCode } from "../errors/error-codes.js";
import { AgentFailedError } from "../errors/step-failed-error.js";
import type { ChatMessage, ChatResponse, ChatToolCall, ChatToolSpec } from "../models/chat-model.js";
import { ANSWER_TOOL_NAME } from "../models/chat-model.js";
import { declinedTurnMessages } from "../pii/declined-turn.js";
import { PiiRefusedError } from "../pii/pii-refused-error.js";
import { PiiUnknownTokenError } from "../pii/pii-unknown-token-error.js";
import type { ExecutionStep } from "../records/execution-record.js";
import { callChatModel } from "../services/model-call.js";
import type { RuntimeServices } from "../services/runtime-services.js";
import { currentFrame, issuesText } from "./agent-node-support.js";
import type { AgentStateUpdate, AgentStateValue } from "./agent-state.js";
import type { LoopState } from "./flow-state.js";
import { stepRecord } from "./step-record.js";

const DEFAULT_MAX_ITERATIONS = 10;
const DEFAULT_MAX_VALIDATION_ATTEMPTS = 2;

function renderInput(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "object" && value !== null && Object.keys(value).length === 1 && "text" in value) {
    return String((value as { text: unknown }).text);
  }
  return JSON.stringify(value, null, 2);
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

/** An agent's model turn, as the pieces of {@link agentModelNode} share it. */
interface AgentModel {
  readonly services: RuntimeServices;
  readonly agent: AssembledAgent;
  /** The tools offered to the model (with the answer tool when the agent answers with a DTO). */
  readonly specs: ChatToolSpec[];
  /** Whether the agent answers with a DTO, through the answer tool. */
  readonly structured: boolean;
  readonly maxIterations: number;
  readonly maxValidation: number;
}

/** One model turn under way: its node, where its loop stands, and the messages it adds. */
interface Turn {
  readonly nodeId: string;
  readonly loop: LoopState;
  /** The messages this turn adds to the conversation; the pieces push onto it. */
  readonly added: ChatMessage[];
}

/**
 * The model turn of an agent's loop: opens a visit with the step's input, asks the model, and decides
 * where the loop goes (the tools, another try at a valid answer, or the next step).
 * @internal
 */
export function agentModelNode(services: RuntimeServices, agent: AssembledAgent) {
  const specs = toolSpecs(agent);
  const model: AgentModel = {
    services,
    agent,
    specs,
    structured: specs.some((s) => s.name === ANSWER_TOOL_NAME),
    maxIterations: agent.options.maxToolLoopIterations ?? DEFAULT_MAX_ITERATIONS,
    maxValidation: agent.options.maxValidationAttempts ?? DEFAULT_MAX_VALIDATION_ATTEMPTS,
  };
  return async (state: AgentStateValue): Promise<AgentStateUpdate> => {
    const frame = currentFrame();
    const conversation = [...state.history, ...state.messages];
    const turn = openTurn(model, state, conversation);
    const { response, declined } = await callModel(model, frame, {
      nodeId: turn.nodeId,
      messages: [...conversation, ...turn.added],
    });
    turn.added.push({ role: "assistant", content: response.content, toolCalls: response.toolCalls });
    const modelStep: ExecutionStep = {
      type: "model",
      step: stepRecord(agent, { nodeId: turn.nodeId, loop: turn.loop, branch: state.branch ?? undefined }),
      model: agent.options.model,
      usage: response.usage,
      calledTools: response.toolCalls.map((c) => c.name),
      at: new Date(services.clock.now()).toISOString(),
      caller: callerOf(agent),
    };
    if (declined !== undefined) {
      return { messages: turn.added, loop: retryDeclined(model, turn, declined), steps: [modelStep] };
    }
    const { loop, output } = routeTurn(model, turn, response);
    return { messages: turn.added, loop, steps: [modelStep], ...(output === undefined ? {} : { output }) };
  };
}

/** Who calls the model, as the model request and its step record name it. */
function callerOf(agent: AssembledAgent): string {
  return `agent:${agent.name}`;
}

/**
 * Opens the turn: the next iteration of a visit under way, or a new visit that starts with the step's
 * input (and the agent's prompt, when the conversation is empty). Past the loop's limit the agent fails.
 */
function openTurn(model: AgentModel, state: AgentStateValue, conversation: readonly ChatMessage[]): Turn {
  const { agent, maxIterations } = model;
  const nodeId = state.nodeId;
  const previous = state.loop;
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
  return { nodeId, loop, added };
}

/**
 * Asks the agent's model. A reply with a PII token that stands for no value comes back as `declined`
 * (with the model's response); an unserved model, a budget or a PII refusal is thrown as it is; any
 * other failure fails the agent.
 */
async function callModel(
  model: AgentModel,
  frame: ExecutionFrame,
  request: { readonly nodeId: string; readonly messages: ChatMessage[] },
): Promise<{ response: ChatResponse; declined?: PiiUnknownTokenError }> {
  const { services, agent, specs, structured } = model;
  try {
    const response = await callChatModel(services, {
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
        messages: request.messages,
        tools: specs,
        toolChoice: structured ? "required" : "auto",
        caller: callerOf(agent),
        signal: frame.signal,
      },
    });
    return { response };
  } catch (error) {
    if (error instanceof AgbossError && error.code === ErrorCode.ModelUnserved) throw error;
    if (error instanceof BudgetExceededError || error instanceof PiiRefusedError) throw error;
    if (!(error instanceof PiiUnknownTokenError)) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new AgentFailedError(agent.name, request.nodeId, `its model call failed: ${reason}`, {
        cause: error,
      });
    }
    return { response: error.response, declined: error };
  }
}

/** A turn declined for an unknown PII token: the model is told why and tries again, up to the validation limit. */
function retryDeclined(model: AgentModel, turn: Turn, declined: PiiUnknownTokenError): LoopState {
  // A token that stands for no value declines the whole turn: the model reads why and tries again.
  turn.added.push(...declinedTurnMessages(declined));
  const loop: LoopState = {
    ...turn.loop,
    validationAttempts: turn.loop.validationAttempts + 1,
    route: "retry",
  };
  if (loop.validationAttempts > model.maxValidation) {
    throw new AgentFailedError(
      model.agent.name,
      turn.nodeId,
      "its model kept answering with unknown PII tokens.",
      {
        cause: declined,
      },
    );
  }
  return loop;
}

/**
 * Where the loop goes after the model's response: to the tools when it called any; out with the output
 * when it answered validly; else back to the model, which is told what was wrong, up to the validation
 * limit.
 */
function routeTurn(
  model: AgentModel,
  turn: Turn,
  response: ChatResponse,
): { loop: LoopState; output: unknown } {
  const { loop, added } = turn;
  const workCalls = response.toolCalls.filter((c) => c.name !== ANSWER_TOOL_NAME);
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
    return { loop: { ...loop, route: "tools" }, output: undefined };
  }
  const { output, failure } = model.structured
    ? readStructuredAnswer(model, turn, response)
    : { output: { text: response.content }, failure: undefined };
  if (failure === undefined) return { loop: { ...loop, active: false, route: "done" }, output };
  const retry: LoopState = { ...loop, validationAttempts: loop.validationAttempts + 1, route: "retry" };
  if (retry.validationAttempts > model.maxValidation) {
    throw new AgentFailedError(
      model.agent.name,
      turn.nodeId,
      `its model gave ${retry.validationAttempts} invalid answers; the last: ${failure}`,
    );
  }
  return { loop: retry, output };
}

/**
 * Reads a structured agent's answer from its answer-tool call: the parsed output, or why it is refused
 * (told to the model as the answer tool's error, or as a user message when it did not call the tool).
 */
function readStructuredAnswer(
  model: AgentModel,
  turn: Turn,
  response: ChatResponse,
): { output: unknown; failure: string | undefined } {
  const answerCall = response.toolCalls.find((c) => c.name === ANSWER_TOOL_NAME);
  const answerDto = model.agent.options.output as NonNullable<AssembledAgent["options"]["output"]>;
  const parsed = answerCall === undefined ? undefined : answerDto.schema.safeParse(answerCall.arguments);
  if (parsed?.success === true) {
    // Every tool call of the conversation gets its reply, the answer's too: a later turn on this thread
    // sends the conversation again, and providers refuse a tool call left without one.
    turn.added.push({
      role: "tool",
      toolCallId: (answerCall as ChatToolCall).id,
      name: ANSWER_TOOL_NAME,
      content: "Answer accepted.",
    });
    return { output: parsed.data, failure: undefined };
  }
  const failure =
    parsed === undefined
      ? `answer by calling ${ANSWER_TOOL_NAME}.`
      : `invalid answer: ${issuesText(parsed.error.issues)}`;
  if (answerCall !== undefined) {
    turn.added.push({
      role: "tool",
      toolCallId: answerCall.id,
      name: ANSWER_TOOL_NAME,
      content: `Tool error: ${failure}`,
    });
  } else {
    turn.added.push({ role: "user", content: `Your reply was not accepted: ${failure}` });
  }
  return { output: undefined, failure };
}
