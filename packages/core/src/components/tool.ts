import type { PauseDeadlines } from "../channels/pause-deadlines.js";
import { ComponentKind } from "../container/component-kind.js";
import { type AnyClass, componentDecorator } from "../container/component-registry.js";
import type { DtoClass } from "../dto/dto.js";
import { type Duration, seconds } from "../time/duration.js";

/** The default time a tool may run. */
export const DEFAULT_TOOL_TIMEOUT = seconds(30);

/** What `@Tool` declares. */
export interface ToolOptions {
  /** Ends with `-tool`. */
  readonly name: string;
  /** What the model reads to decide when to call it. */
  readonly description: string;
  readonly input: DtoClass;
  readonly output: DtoClass;
  /**
   * A channel role or concrete channel asked about each call before it runs: an approval role or a
   * concrete channel approves or rejects it; a question role's answer is passed to `run(input, answer)`.
   */
  readonly channel?: AnyClass;
  /** Overrides the deadlines of its channel role for this tool's calls, field by field. */
  readonly deadlines?: PauseDeadlines;
  /** How long `run` may take on the application's Clock before its signal aborts. Default 30 s. */
  readonly timeout?: Duration;
  readonly deps?: readonly unknown[];
}

/**
 * What a `@Tool` class implements. A tool whose channel is a question role takes the person's answer
 * as `run`'s second argument (`TAnswer`, the role's `answer` DTO).
 */
export interface ToolHandler<TInput, TOutput, TAnswer = never> {
  /** Does the work. `executionContext.signal` aborts when the call times out or is cancelled. */
  run(
    input: TInput,
    ...answer: [TAnswer] extends [never] ? [] : [answer: TAnswer]
  ): Promise<TOutput> | TOutput;
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
