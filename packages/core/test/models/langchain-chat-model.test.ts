import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { describe, expect, test } from "vitest";
import { fromLangChain } from "../../src/models/langchain-chat-model.js";

/** A LangChain chat model that answers every turn with the same tool calls, as a scripted provider would. */
class SameCallsModel extends BaseChatModel {
  constructor(private readonly calls: { id?: string; name: string; args: Record<string, unknown> }[]) {
    super({});
  }
  _llmType() {
    return "same-calls";
  }
  override bindTools() {
    return this;
  }
  async _generate(_messages: BaseMessage[]): Promise<ChatResult> {
    const message = new AIMessage({
      content: "",
      tool_calls: this.calls.map((c) => ({ ...c, type: "tool_call" })),
    });
    return { generations: [{ text: "", message }] };
  }
}

const request = {
  model: "m",
  messages: [{ role: "user" as const, content: "refund ord_1" }],
  tools: [{ name: "refund", description: "Refunds", parameters: { type: "object", properties: {} } }],
  toolChoice: "auto" as const,
  caller: "agent:test",
};

describe("fromLangChain", () => {
  test("a tool call without an id gets a fresh one on every turn, so a later turn's call never reuses an earlier call's pause", async () => {
    const model = fromLangChain(
      new SameCallsModel([
        { name: "refund", args: {} },
        { name: "refund", args: {} },
      ]),
    );
    const first = await model.invoke(request);
    const second = await model.invoke(request);
    const ids = [...first.toolCalls, ...second.toolCalls].map((c) => c.id);
    expect(ids.every((id) => typeof id === "string" && id.length > 8)).toBe(true);
    expect(new Set(ids).size).toBe(4);
  });

  test("a provider's own tool call id is kept", async () => {
    const model = fromLangChain(new SameCallsModel([{ id: "call_abc", name: "refund", args: {} }]));
    expect((await model.invoke(request)).toolCalls.map((c) => c.id)).toEqual(["call_abc"]);
  });
});
