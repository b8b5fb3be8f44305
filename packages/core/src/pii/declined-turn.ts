import type { ChatMessage } from "../models/chat-model.js";
import type { PiiUnknownTokenError } from "./pii-unknown-token-error.js";

/**
 * What an agent's model reads after a turn declined for unknown PII tokens: a tool error for each of
 * its tool calls (every call gets its answer), or a user message when it called none.
 * @internal
 */
export function declinedTurnMessages(error: PiiUnknownTokenError): ChatMessage[] {
  const content = `Tool error: ${error.tokens.join(", ")} stand${error.tokens.length === 1 ? "s" : ""} for no value you were given; use only the tokens in the conversation.`;
  if (error.response.toolCalls.length === 0) return [{ role: "user", content }];
  return error.response.toolCalls.map((call) => ({
    role: "tool",
    toolCallId: call.id,
    name: call.name,
    content,
  }));
}
