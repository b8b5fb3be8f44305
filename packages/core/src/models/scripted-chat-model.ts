import type { AnyClass } from "../container/component-registry.js";
import { componentOf } from "../container/component-registry.js";
import type { DtoClass } from "../dto/dto.js";
import { ANSWER_TOOL_NAME, type ChatModel, type ChatRequest, type ChatResponse } from "./chat-model.js";

/** One scripted model turn: a fixed answer, or a function of the request. */
export type ScriptedTurn = ChatResponse | ((request: ChatRequest) => ChatResponse | Promise<ChatResponse>);

let callCounter = 0;
const nextCallId = () => `call_${(++callCounter).toString(36)}`;

/**
 * A turn in which the model calls a tool with `args` (not validated here: a test may script a wrong
 * input to see the model read the error).
 */
export function callTool<TInput>(
  tool: AnyClass,
  args: TInput,
  ...more: Array<[AnyClass, unknown]>
): ChatResponse {
  const calls = [[tool, args] as [AnyClass, unknown], ...more].map(([t, a]) => {
    const name = (componentOf<{ name?: string }>(t)?.options.name ?? t.name) as string;
    return { id: nextCallId(), name, arguments: a };
  });
  return { content: "", toolCalls: calls };
}

/** A turn in which the model answers: with a text, or with a DTO value through the answer tool. */
export function replyWith(text: string): ChatResponse;
export function replyWith<T>(dto: DtoClass<T>, value: T): ChatResponse;
export function replyWith(textOrDto: string | DtoClass, value?: unknown): ChatResponse {
  if (typeof textOrDto === "string") return { content: textOrDto, toolCalls: [] };
  return { content: "", toolCalls: [{ id: nextCallId(), name: ANSWER_TOOL_NAME, arguments: value }] };
}

/** Thrown when a scripted model is asked for a turn it does not have. */
export class ScriptExhaustedError extends Error {
  constructor(caller: string, used: number) {
    super(
      `${caller} asked its model for turn ${used + 1}, but only ${used} turn${used === 1 ? " was" : "s were"} scripted. ` +
        "Script another turn (thenReturn(…)) or check why the agent looped.",
    );
    this.name = "ScriptExhaustedError";
  }
}

/**
 * A model that plays back scripted turns in order, for examples, demos and benchmarks with no network.
 *
 * @example
 * new ScriptedChatModel([callTool(RefundCardTool, { orderId: "o1" }), replyWith("Refunded o1")])
 */
export class ScriptedChatModel implements ChatModel {
  readonly #turns: ScriptedTurn[];
  readonly #loop: boolean;
  readonly #keep: number;
  #used = 0;
  /**
   * The requests the model was asked, in order: every one for a finite script; the latest `keep`
   * (default 100) for a looping one, which may serve a long-running demo.
   */
  readonly requests: ChatRequest[] = [];

  constructor(turns: readonly ScriptedTurn[], options: { loop?: boolean; keep?: number } = {}) {
    this.#turns = [...turns];
    this.#loop = options.loop ?? false;
    const keep = options.keep ?? (this.#loop ? 100 : Number.POSITIVE_INFINITY);
    if (!(keep >= 0)) throw new RangeError(`ScriptedChatModel: keep must be 0 or more (got ${keep}).`);
    this.#keep = keep;
  }

  async invoke(request: ChatRequest): Promise<ChatResponse> {
    this.requests.push(request);
    if (this.requests.length > this.#keep) this.requests.splice(0, this.requests.length - this.#keep);
    const index = this.#loop && this.#turns.length > 0 ? this.#used % this.#turns.length : this.#used;
    const turn = this.#turns[index];
    if (turn === undefined) throw new ScriptExhaustedError(request.caller, this.#used);
    this.#used += 1;
    const response = typeof turn === "function" ? await turn(request) : turn;
    // Fresh call ids per turn, so a looping script never repeats one.
    return {
      ...response,
      toolCalls: response.toolCalls.map((c) => ({ ...c, id: this.#loop ? nextCallId() : c.id })),
    };
  }
}
