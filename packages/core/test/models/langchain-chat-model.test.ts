import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import { FakeListChatModel } from "@langchain/core/utils/testing";
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

/** A LangChain chat model that streams its answer in pieces: text, then a tool call cut in two, then usage. */
class ChunkedModel extends BaseChatModel {
  streamed = 0;
  _llmType() {
    return "chunked";
  }
  override bindTools() {
    return this;
  }
  async _generate(): Promise<ChatResult> {
    throw new Error("this model only streams");
  }
  override async *_streamResponseChunks(): AsyncGenerator<ChatGenerationChunk> {
    this.streamed += 1;
    const pieces = [
      new AIMessageChunk({ content: "Refunding " }),
      new AIMessageChunk({ content: "ord_1" }),
      new AIMessageChunk({
        content: "",
        tool_call_chunks: [
          { id: "call_1", name: "refund", args: '{"orderId":', index: 0, type: "tool_call_chunk" },
        ],
      }),
      new AIMessageChunk({
        content: "",
        tool_call_chunks: [{ args: '"ord_1"}', index: 0, type: "tool_call_chunk" }],
        usage_metadata: { input_tokens: 12, output_tokens: 5, total_tokens: 17 },
      }),
    ];
    for (const message of pieces) {
      yield new ChatGenerationChunk({
        message,
        text: typeof message.content === "string" ? message.content : "",
      });
    }
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

  test("with onText, a streaming model's text is passed on piece by piece, and the turn is the pieces joined", async () => {
    const model = fromLangChain(new FakeListChatModel({ responses: ["Refunded ord_1"] }));
    const pieces: string[] = [];
    const response = await model.invoke({ ...request, tools: [], onText: (text) => pieces.push(text) });
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join("")).toBe("Refunded ord_1");
    expect(response.content).toBe("Refunded ord_1");
    // Without onText the model is invoked as before.
    expect((await model.invoke({ ...request, tools: [] })).content).toBe("Refunded ord_1");
  });

  test("a streamed turn keeps its tool call, cut in two across chunks, and its usage", async () => {
    const chunked = new ChunkedModel({});
    const pieces: string[] = [];
    const response = await fromLangChain(chunked).invoke({ ...request, onText: (text) => pieces.push(text) });
    expect(chunked.streamed).toBe(1);
    expect(pieces).toEqual(["Refunding ", "ord_1"]);
    expect(response.content).toBe("Refunding ord_1");
    expect(response.toolCalls).toEqual([{ id: "call_1", name: "refund", arguments: { orderId: "ord_1" } }]);
    expect(response.usage).toEqual({ inputTokens: 12, outputTokens: 5 });
  });
});
