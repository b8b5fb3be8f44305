import type { AnyClass, ChatModel, ChatRequest, ChatResponse, ScriptedTurn } from "@agboss/core";
import { ModelScriptExhaustedError } from "./model-script-exhausted-error.js";
import { type TurnMatch, turnMatches } from "./turn-match.js";

/** Turns that answer only requests matching a {@link TurnMatch}; made by {@link ModelScript.when}. */
export interface ModelScriptCase {
  /** Appends turns to this case, in order; returns the whole script to chain more. */
  thenReturn(...turns: ScriptedTurn[]): ModelScript;
}

interface CaseTurns {
  readonly match: TurnMatch;
  readonly turns: ScriptedTurn[];
  used: number;
}

/**
 * The scripted model of one component in a test, made by the `mockLlm` fixture. Each model call takes
 * the next turn: from the first `.when(…)` case that matches the request and has turns left, else from
 * the turns given to `.thenReturn(…)`. It serves every app the test opened, so a conversation paused on
 * one app goes on with the next turn on another.
 *
 * @example
 * mockLlm(RefundAgent).thenReturn(callTool(RefundCardTool, { orderId: "o1" }), replyWith("Refunded o1"));
 * // … run the workflow …
 * expect(mockLlm(RefundAgent).calls).toHaveLength(2);
 */
export class ModelScript implements ChatModel {
  /** The component whose model this script plays. */
  readonly component: AnyClass;
  /** Every request the component's model received, in order. */
  readonly calls: ChatRequest[] = [];
  readonly #turns: ScriptedTurn[] = [];
  readonly #cases: CaseTurns[] = [];
  readonly #seenCallIds = new Set<string>();
  #used = 0;

  /** @internal Use the `mockLlm` fixture. */
  constructor(component: AnyClass) {
    this.component = component;
  }

  /** Appends turns the model plays back in order: `callTool(…)`, `replyWith(…)`, or a function of the request. */
  thenReturn(...turns: ScriptedTurn[]): this {
    this.#turns.push(...turns);
    return this;
  }

  /**
   * Starts a case: turns that answer only requests matching `match`, taken before the default turns.
   *
   * @example
   * mockLlm(RefundReplyInterpreter).when({ reply: "ok, but only half" }).thenReturn(replyWith(DecisionDto, { approved: true }))
   */
  when(match: TurnMatch): ModelScriptCase {
    const entry: CaseTurns = { match, turns: [], used: 0 };
    this.#cases.push(entry);
    return {
      thenReturn: (...turns: ScriptedTurn[]) => {
        entry.turns.push(...turns);
        return this;
      },
    };
  }

  /** How many scripted turns are left unplayed, cases included. */
  get remaining(): number {
    return this.#turns.length - this.#used + this.#cases.reduce((n, c) => n + c.turns.length - c.used, 0);
  }

  /** Plays the next turn for `request`. Called by the runtime as the component's model. */
  async invoke(request: ChatRequest): Promise<ChatResponse> {
    this.calls.push(request);
    const found = this.#cases.find((c) => c.used < c.turns.length && turnMatches(c.match, request));
    let turn: ScriptedTurn | undefined;
    if (found !== undefined) turn = found.turns[found.used++];
    else if (this.#used < this.#turns.length) turn = this.#turns[this.#used++];
    if (turn === undefined) {
      throw new ModelScriptExhaustedError({
        component: this.component,
        caller: request.caller,
        scripted: this.#turns.length,
        cases: this.#cases.length,
      });
    }
    const response = typeof turn === "function" ? await turn(request) : turn;
    return {
      ...response,
      toolCalls: response.toolCalls.map((call) => ({ ...call, id: this.#freshId(call.id) })),
    };
  }

  // A turn object played twice would repeat its tool-call ids; the conversation needs them unique.
  #freshId(id: string): string {
    let candidate = id;
    for (let n = 2; this.#seenCallIds.has(candidate); n += 1) candidate = `${id}_${n}`;
    this.#seenCallIds.add(candidate);
    return candidate;
  }
}
