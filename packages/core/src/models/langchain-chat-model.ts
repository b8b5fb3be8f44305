import { randomUUID } from "node:crypto";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import {
  AIMessage,
  type AIMessageChunk,
  type BaseMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
} from "@langchain/core/messages";
import type { ChatMessage, ChatModel, ChatRequest, ChatResponse } from "./chat-model.js";

function toLangChain(message: ChatMessage): BaseMessage {
  switch (message.role) {
    case "system":
      return new SystemMessage(message.content);
    case "user":
      return new HumanMessage(message.content);
    case "assistant":
      return new AIMessage({
        content: message.content,
        tool_calls: (message.toolCalls ?? []).map((c) => ({
          id: c.id,
          name: c.name,
          args: (c.arguments ?? {}) as Record<string, unknown>,
          type: "tool_call" as const,
        })),
      });
    case "tool":
      return new ToolMessage({
        content: message.content,
        tool_call_id: message.toolCallId,
        name: message.name,
      });
  }
}

function textOf(content: AIMessage["content"]): string {
  if (typeof content === "string") return content;
  return content
    .map((part) => (typeof part === "object" && part !== null && "text" in part ? String(part.text) : ""))
    .join("");
}

/**
 * Streams a turn: each chunk's text is passed on as it arrives, and the chunks are joined into the
 * whole message (LangChain joins tool-call pieces and usage too).
 */
async function streamed(
  model: Pick<BaseChatModel, "stream">,
  messages: BaseMessage[],
  onText: (text: string) => void,
  signal: AbortSignal | undefined,
): Promise<AIMessage> {
  let whole: AIMessageChunk | undefined;
  for await (const chunk of await model.stream(messages, { signal })) {
    const text = textOf(chunk.content);
    if (text !== "") onText(text);
    whole = whole === undefined ? chunk : whole.concat(chunk);
  }
  return whole ?? new AIMessage("");
}

/**
 * Lets any LangChain chat model serve AGBoss: messages and tools are translated both ways.
 *
 * @example
 * chatModel(id: string) { return fromLangChain(new ChatOpenAI({ model: id })); }
 */
export function fromLangChain(model: BaseChatModel): ChatModel {
  return {
    async invoke(request: ChatRequest): Promise<ChatResponse> {
      const tools = request.tools.map((t) => ({
        type: "function" as const,
        function: { name: t.name, description: t.description, parameters: t.parameters },
      }));
      const bound =
        tools.length > 0 && model.bindTools
          ? model.bindTools(tools, request.toolChoice === "required" ? { tool_choice: "required" } : {})
          : model;
      const messages = request.messages.map(toLangChain);
      const reply =
        request.onText === undefined
          ? ((await bound.invoke(messages, { signal: request.signal })) as AIMessage)
          : await streamed(bound, messages, request.onText, request.signal);
      const usage = reply.usage_metadata;
      return {
        content: textOf(reply.content),
        // A provider that sends no id gets a fresh one: a tool call's id is part of its step's
        // idempotency key, so `call_0` in a later turn must not find the pause of an earlier one.
        toolCalls: (reply.tool_calls ?? []).map((c) => ({
          id: c.id === undefined || c.id === "" ? `call_${randomUUID()}` : c.id,
          name: c.name,
          arguments: c.args,
        })),
        ...(usage === undefined
          ? {}
          : { usage: { inputTokens: usage.input_tokens, outputTokens: usage.output_tokens } }),
      };
    },
  };
}
