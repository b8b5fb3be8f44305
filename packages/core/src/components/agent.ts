import { ComponentKind } from "../container/component-kind.js";
import { type AnyClass, componentDecorator } from "../container/component-registry.js";
import type { DtoClass } from "../dto/dto.js";

/** What `@Agent` declares. */
export interface AgentOptions {
  /** Ends with `-agent`. */
  readonly name: string;
  readonly description: string;
  /** The agent's instructions (its system message). */
  readonly prompt: string;
  /** A model id a `@ModelProvider` serves, e.g. `moonshotai/kimi-k2.6`. */
  readonly model: string;
  /** The `@Tool` classes it may call. */
  readonly tools?: readonly AnyClass[];
  /** A DTO the agent answers with through an answer tool; default: a text answer. */
  readonly output?: DtoClass;
  /** How many model turns one visit may take before the agent fails. Default 10. */
  readonly maxToolLoopIterations?: number;
  /** How many invalid answers the model may give before the agent fails. Default 2. */
  readonly maxValidationAttempts?: number;
}

/**
 * Declares an agent: a model in a loop with tools.
 *
 * @example
 * @Agent({ name: "refund-agent", description: "Refunds orders", prompt: "…", model: "moonshotai/kimi-k2.6", tools: [RefundCardTool] })
 * export class RefundAgent {}
 */
export function Agent(options: AgentOptions) {
  return componentDecorator(ComponentKind.Agent, options);
}
