import type { DtoClass } from "../dto/dto.js";
import type { Duration } from "../time/duration.js";
import { ComponentKind } from "./component-kind.js";
import { type AnyClass, componentDecorator } from "./component-registry.js";

/** What `@Tool` declares. */
export interface ToolOptions {
  /** Ends with `-tool`. */
  readonly name: string;
  /** What the model reads to decide when to call it. */
  readonly description: string;
  readonly input: DtoClass;
  readonly output: DtoClass;
  /** A channel role or concrete channel that must approve each call before it runs. */
  readonly channel?: AnyClass;
  /** How long `run` may take on the application's Clock before its signal aborts. Default 30 s. */
  readonly timeout?: Duration;
  readonly deps?: readonly unknown[];
}

/** What a `@Tool` class implements. */
export interface ToolHandler<TInput, TOutput> {
  /** Does the work. `executionContext.signal` aborts when the call times out or is cancelled. */
  run(input: TInput): Promise<TOutput> | TOutput;
}

/**
 * Declares a tool an agent can call; with `channel`, each call waits for that channel's decision.
 *
 * @example
 * @Tool({ name: "refund-card-tool", description: "Refunds a card payment", input: RefundInputDto, output: RefundOutputDto })
 * export class RefundCardTool implements ToolHandler<RefundInputDto, RefundOutputDto> { … }
 */
export function Tool(options: ToolOptions) {
  return componentDecorator(ComponentKind.Tool, options);
}
