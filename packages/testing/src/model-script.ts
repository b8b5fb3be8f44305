import type {
  AnyClass,
  ChatModel,
  ChatRequest,
  ChatResponse,
  DecisionModel,
  DecisionRequest,
  DecisionResponse,
  ScriptedTurn,
} from "@agboss/core";
import { componentLabel } from "./component-label.js";
import { type DecisionTurn, isDecisionTurn } from "./decide-with.js";
import { ModelScriptExhaustedError } from "./model-script-exhausted-error.js";
import { TestSetupError } from "./test-setup-error.js";
import { type TurnMatch, turnMatches } from "./turn-match.js";

/**
 * One scripted turn of a `mockLlm` script: a chat turn (`callTool(…)`, `replyWith(…)`, a function of the
 * request) for a chat model, or `decideWith(…)` for a decision model.
 */
export type ModelTurn = ScriptedTurn | DecisionTurn;

/** Turns that answer only requests matching a {@link TurnMatch}; made by {@link ModelScript.when}. */
export interface ModelScriptCase {
  /** Appends turns to this case, in order; returns the whole script to chain more. */
  thenReturn(...turns: ModelTurn[]): ModelScript;
}

interface CaseTurns {
  readonly match: TurnMatch;
  readonly turns: ModelTurn[];
  used: number;
}

/**
 * A decision request as the chat request a {@link TurnMatch} reads: the instructions as the system
 * message, the input (`### ask`, `### reply`) as the user message.
 */
function asChatRequest(request: DecisionRequest): ChatRequest {
  return {
    model: request.model,
    caller: request.caller,
    messages: [
      { role: "system", content: request.instructions },
      { role: "user", content: request.input },
    ],
    tools: [],
    ...(request.signal === undefined ? {} : { signal: request.signal }),
  };
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
export class ModelScript implements ChatModel, DecisionModel {
  /** The component whose model this script plays. */
  readonly component: AnyClass;
  /** Every request the component's model received, in order. */
  readonly calls: ChatRequest[] = [];
  /** Every yes / no question the component's decision model received, in order. */
  readonly decisions: DecisionRequest[] = [];
  readonly #turns: ModelTurn[] = [];
  readonly #cases: CaseTurns[] = [];
  readonly #seenCallIds = new Set<string>();
  #used = 0;

  /** @internal Use the `mockLlm` fixture. */
  constructor(component: AnyClass) {
    this.component = component;
  }

  /**
   * Appends turns the model plays back in order: `callTool(…)`, `replyWith(…)`, or a function of the
   * request for a chat model; `decideWith(…)` for a decision model.
   */
  thenReturn(...turns: ModelTurn[]): this {
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
      thenReturn: (...turns: ModelTurn[]) => {
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
    const turn = this.#next(request, request.caller);
    if (isDecisionTurn(turn)) {
      const cls = this.component.name || "TheComponent";
      throw new TestSetupError(
        `${componentLabel(this.component)} asked its chat model (as ${request.caller}), but the next turn of ` +
          `mockLlm(${cls}) is decideWith(…), which only a decision model plays. Script a chat turn ` +
          "(callTool(…), replyWith(…)) here, or list the model id in the decides of its @ModelProvider.",
      );
    }
    const response = typeof turn === "function" ? await turn(request) : turn;
    return {
      ...response,
      toolCalls: response.toolCalls.map((call) => ({ ...call, id: this.#freshId(call.id) })),
    };
  }

  /**
   * Answers a yes / no question with the next turn, which must be `decideWith(…)` for the question's
   * field. Called by the runtime as the component's decision model. `.when(…)` cases read the request's
   * input (`### ask`, `### reply`); a predicate gets it as a chat request (instructions, then input).
   */
  async decide(request: DecisionRequest): Promise<DecisionResponse> {
    this.decisions.push(request);
    const turn = this.#next(asChatRequest(request), request.caller);
    const cls = this.component.name || "TheComponent";
    if (!isDecisionTurn(turn)) {
      throw new TestSetupError(
        `${componentLabel(this.component)} asked its decision model a yes / no question about ` +
          `"${request.question.field}" (as ${request.caller}), but the next turn of mockLlm(${cls}) is a chat turn. ` +
          `Script it with decideWith({ ${request.question.field}: 0.9 }).`,
      );
    }
    if (turn.field !== request.question.field) {
      throw new TestSetupError(
        `${componentLabel(this.component)} asked its decision model about "${request.question.field}", but ` +
          `mockLlm(${cls}) scripted decideWith({ ${turn.field}: ${turn.probabilityYes} }). ` +
          `Script decideWith({ ${request.question.field}: … }).`,
      );
    }
    return {
      probabilityYes: turn.probabilityYes,
      ...(turn.usage === undefined ? {} : { usage: turn.usage }),
    };
  }

  /** Takes the next turn for `request`: the first matching case with turns left, else the default turns. */
  #next(request: ChatRequest, caller: string): ModelTurn {
    const found = this.#cases.find((c) => c.used < c.turns.length && turnMatches(c.match, request));
    let turn: ModelTurn | undefined;
    if (found !== undefined) turn = found.turns[found.used++];
    else if (this.#used < this.#turns.length) turn = this.#turns[this.#used++];
    if (turn === undefined) {
      throw new ModelScriptExhaustedError({
        component: this.component,
        caller,
        scripted: this.#turns.length,
        cases: this.#cases.length,
      });
    }
    return turn;
  }

  // A turn object played twice would repeat its tool-call ids; the conversation needs them unique.
  #freshId(id: string): string {
    let candidate = id;
    for (let n = 2; this.#seenCallIds.has(candidate); n += 1) candidate = `${id}_${n}`;
    this.#seenCallIds.add(candidate);
    return candidate;
  }
}
