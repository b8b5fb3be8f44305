import type { AnyClass } from "../container/component-registry.js";
import { ExecutionContext, type ExecutionFrame } from "../container/execution-context.js";
import { LogLevel } from "../logging/logger.js";
import type { ChatRequest, ChatResponse, ModelUsage } from "../models/chat-model.js";
import type { DecisionRequest, DecisionResponse } from "../models/decision-model.js";
import { hideMessages, readableTexts, revealResponse, tokenMapFor } from "../pii/pii-shield.js";
import type { PiiTokenMap } from "../pii/pii-token-map.js";
import { type SensitiveSource, sensitiveValuesOf } from "../pii/sensitive-values.js";
import { agentSensitiveSources } from "./agent-sensitive-sources.js";
import { type AppliedBudget, budgetsOf, chargeBudgets, checkBudgets } from "./budget-guard.js";
import { followed } from "./followers.js";
import { piiPoliciesOf } from "./pii-policies.js";
import { tellProgress } from "./progress.js";
import type { RuntimeServices } from "./runtime-services.js";
import { frameAttributes, spanOf } from "./tracing.js";

/** Who a model call is made for: the budgets it counts against and the policies it reads through. @internal */
export interface ModelCallScope {
  readonly tenantId: string;
  readonly rootExecutionId: string;
  readonly executionId: string;
  readonly workflow: string;
}

/** One model call, as every caller (an agent's turn, an interpreter) makes it. @internal */
export interface ModelCall {
  /** The component whose model it is (an agent, an interpreter): overrides and scripts are keyed by it. */
  readonly component: AnyClass;
  readonly modelId: string;
  readonly scope: ModelCallScope;
  readonly request: ChatRequest;
  /**
   * Typed values the messages were written from, beyond what an agent's conversation shows (an
   * interpreter's question): PII policies find their `sensitive(…)` fields.
   */
  readonly sensitive?: readonly SensitiveSource[];
}

function trace(
  services: RuntimeServices,
  call: { scope: ModelCallScope; modelId: string },
  outcome: { readonly caller: string; readonly usage: ModelUsage | undefined; readonly failed: boolean },
): void {
  const { caller, usage, failed } = outcome;
  services.logger.log({
    level: LogLevel.Debug,
    event: "model.call",
    message: `${caller} called ${call.modelId}${failed ? " (failed)" : ""}`,
    fields: {
      caller,
      model: call.modelId,
      tenantId: call.scope.tenantId,
      executionId: call.scope.executionId,
      rootExecutionId: call.scope.rootExecutionId,
      workflow: call.scope.workflow,
      inputTokens: usage?.inputTokens,
      outputTokens: usage?.outputTokens,
      failed,
    },
    at: services.clock.now(),
  });
}

/** Makes the call once its budgets allowed it; counts it (also when it failed) and traces it. */
async function spend<T extends { readonly usage?: ModelUsage }>(
  services: RuntimeServices,
  call: { scope: ModelCallScope; modelId: string },
  caller: string,
  operation: "chat" | "decide",
  make: () => Promise<T>,
): Promise<T> {
  const budgets: AppliedBudget[] = await budgetsOf(services, call.scope);
  await checkBudgets(services, budgets, caller);
  let result: T;
  const frame = ExecutionContext.current();
  const span = services.tracing?.start(
    `${operation} ${call.modelId}`,
    () => ({
      ...frameAttributes(frame),
      "agboss.execution_id": call.scope.executionId,
      "agboss.root_execution_id": call.scope.rootExecutionId,
      "agboss.tenant_id": call.scope.tenantId,
      "agboss.workflow": call.scope.workflow,
      "agboss.caller": caller,
      "gen_ai.operation.name": operation,
      "gen_ai.request.model": call.modelId,
    }),
    spanOf(frame),
  );
  try {
    result = await (span === undefined || !span.recording ? make() : span.run(make));
  } catch (error) {
    span?.end(error);
    await chargeBudgets(services, budgets, undefined);
    trace(services, call, { caller, usage: undefined, failed: true });
    throw error;
  }
  span?.set({
    "gen_ai.usage.input_tokens": result.usage?.inputTokens,
    "gen_ai.usage.output_tokens": result.usage?.outputTokens,
  });
  span?.end();
  await chargeBudgets(services, budgets, result.usage);
  trace(services, call, { caller, usage: result.usage, failed: false });
  if (budgets.length > 0) {
    tellProgress(services, ExecutionContext.current(), () => ({
      type: "budget.spent",
      caller,
      model: call.modelId,
      usage: result.usage,
      budgets: budgets.map((b) => ({ level: b.level, name: b.name })),
    }));
  }
  return result;
}

function tokenMap(
  services: RuntimeServices,
  args: { scope: ModelCallScope; texts: readonly string[]; sources: () => readonly SensitiveSource[] },
  caller: string,
): PiiTokenMap | undefined {
  const policies = piiPoliciesOf(services.assembled, args.scope.workflow);
  if (policies.length === 0) return undefined;
  const fields = policies.some((p) => p.detector.kind === "fields");
  return tokenMapFor({
    policies,
    texts: args.texts,
    sensitive: fields ? sensitiveValuesOf(args.sources()) : [],
    caller,
  });
}

/**
 * Makes a chat-model call. Every model call of the runtime goes through here: the PII policies of the
 * application and the workflow run over what the model reads (a refusal throws `PiiRefusedError`,
 * tokens replace values and are revealed in the answer), every budget of the call's tree is checked
 * before it is made (`BudgetExceededError`) and charged once after, and the call is traced.
 * @internal
 */
export async function callChatModel(services: RuntimeServices, call: ModelCall): Promise<ChatResponse> {
  const caller = call.request.caller;
  const model = await services.models.resolve(call.modelId, call.component, caller);
  const { messages } = call.request;
  const map = tokenMap(
    services,
    {
      scope: call.scope,
      texts: readableTexts(messages),
      sources: () => [
        ...(call.sensitive ?? []),
        ...agentSensitiveSources(services, call.component, call.scope.workflow, messages),
      ],
    },
    caller,
  );
  const frame = ExecutionContext.current();
  // Pieces of a shielded answer hold tokens, not values (and a token may be cut in two): its text is
  // streamed whole, revealed, when the turn ends.
  const request =
    map !== undefined
      ? { ...call.request, messages: hideMessages(map, messages) }
      : frame === undefined || (frame.progress === undefined && !followed(services, frame))
        ? call.request
        : { ...call.request, onText: textListener(services, frame, call) };
  const response = await spend(services, call, caller, "chat", () => model.invoke(request));
  const revealed = map === undefined ? response : revealResponse(map, response, caller);
  tellProgress(services, frame, () => ({
    type: "model.turn",
    caller,
    model: call.modelId,
    text: revealed.content,
    toolCalls: revealed.toolCalls.map((c) => ({ id: c.id, name: c.name })),
    usage: revealed.usage,
  }));
  return revealed;
}

/** What a model that streams calls with each piece of its text, for the run's listener. */
function textListener(
  services: RuntimeServices,
  frame: ExecutionFrame,
  call: ModelCall,
): (text: string) => void {
  return (text) =>
    tellProgress(services, frame, () => ({
      type: "model.text",
      caller: call.request.caller,
      model: call.modelId,
      text,
    }));
}

/** One decision-model call (a yes / no with a probability). @internal */
export interface DecisionCall {
  readonly component: AnyClass;
  readonly modelId: string;
  readonly scope: ModelCallScope;
  readonly request: DecisionRequest;
  /** As for {@link ModelCall.sensitive}. */
  readonly sensitive?: readonly SensitiveSource[];
}

/** Makes a decision-model call; like {@link callChatModel}, the one place every such call goes through. @internal */
export async function callDecisionModel(
  services: RuntimeServices,
  call: DecisionCall,
): Promise<DecisionResponse> {
  const caller = call.request.caller;
  const model = await services.models.resolveDecision(call.modelId, call.component, caller);
  const map = tokenMap(
    services,
    { scope: call.scope, texts: [call.request.input], sources: () => call.sensitive ?? [] },
    caller,
  );
  const request = map === undefined ? call.request : { ...call.request, input: map.hide(call.request.input) };
  return spend(services, call, caller, "decide", () => model.decide(request));
}
