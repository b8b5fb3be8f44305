import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";

let callCounter = 0;

/**
 * The raw-LangGraph side's scripted model: it calls one tool, then, once the conversation ends with the
 * tool's result, answers with a text. It decides from the messages, so it needs no per-thread state.
 */
export class TwoTurnLangChainModel extends BaseChatModel {
  readonly #tool: string;
  readonly #args: Record<string, unknown>;
  readonly #answer: string;

  constructor(turns: { tool: string; args: Record<string, unknown>; answer: string }) {
    super({});
    this.#tool = turns.tool;
    this.#args = turns.args;
    this.#answer = turns.answer;
  }

  override _llmType(): string {
    return "bench-two-turn";
  }

  /** Tools change nothing in a scripted model. */
  override bindTools(): this {
    return this;
  }

  override async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const message = ToolMessage.isInstance(messages.at(-1))
      ? new AIMessage({ content: this.#answer })
      : new AIMessage({
          content: "",
          tool_calls: [
            {
              id: `lc_${(++callCounter).toString(36)}`,
              name: this.#tool,
              args: { ...this.#args },
              type: "tool_call",
            },
          ],
        });
    return { generations: [{ text: typeof message.content === "string" ? message.content : "", message }] };
  }
}
