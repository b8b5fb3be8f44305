import type { ModelUsage } from "../models/chat-model.js";
import type { ExecutionStep } from "../records/execution-record.js";
import type { StepRecord } from "../records/step.js";

/**
 * The model step that puts what reading a reply cost (a pause answer's `cost`) into the execution's
 * spend, under the step that takes the answer. Undefined when no model read the reply.
 * @internal
 */
export function interpreterSpendStep(cost: unknown, step: StepRecord, at: string): ExecutionStep | undefined {
  if (typeof cost !== "object" || cost === null) return undefined;
  const { interpreter, model, usage } = cost as {
    interpreter?: unknown;
    model?: unknown;
    usage?: ModelUsage;
  };
  if (typeof interpreter !== "string" || typeof model !== "string") return undefined;
  return {
    type: "model",
    step,
    model,
    usage,
    calledTools: [],
    at,
    caller: `reply-interpreter:${interpreter}`,
  };
}
