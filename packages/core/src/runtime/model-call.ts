import type { AnyClass } from "../components/component-registry.js";
import type { ChatRequest, ChatResponse } from "../models/chat-model.js";
import type { DecisionRequest, DecisionResponse } from "../models/decision-model.js";
import type { RuntimeServices } from "./runtime-services.js";

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
}

/**
 * Makes a chat-model call. Every model call of the runtime goes through here, so what applies to all
 * of them (budgets checked before and counted after, PII policies on the way in and out) applies in
 * one place.
 * @internal
 */
export async function callChatModel(services: RuntimeServices, call: ModelCall): Promise<ChatResponse> {
  const model = await services.models.resolve(call.modelId, call.component, call.request.caller);
  return model.invoke(call.request);
}

/** One decision-model call (a yes / no with a probability). @internal */
export interface DecisionCall {
  readonly component: AnyClass;
  readonly modelId: string;
  readonly scope: ModelCallScope;
  readonly request: DecisionRequest;
}

/** Makes a decision-model call; like {@link callChatModel}, the one place every such call goes through. @internal */
export async function callDecisionModel(
  services: RuntimeServices,
  call: DecisionCall,
): Promise<DecisionResponse> {
  const model = await services.models.resolveDecision(call.modelId, call.component, call.request.caller);
  return model.decide(call.request);
}
