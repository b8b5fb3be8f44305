import { type ChatRequest, callTool, replyWith, type ScriptedTurn } from "@agboss/core";
import { BookPickupTool } from "./book-pickup-tool.js";
import { DamageRefundTool } from "./damage-refund-tool.js";

/** What a tool's message in the conversation says: its status, or why it did not run. */
function outcomeOf(request: ChatRequest, tool: string): string {
  const message = request.messages.findLast((m) => m.role === "tool" && m.name === tool);
  if (message === undefined) return "no answer";
  if (message.content.startsWith("Tool error:")) return message.content.slice("Tool error:".length).trim();
  return (JSON.parse(message.content) as { status: string }).status;
}

/**
 * The returns model's one scripted move, read from the conversation so any process can play it: with no
 * tool results yet it calls both tools in one turn (two questions at once), then it reports both.
 */
export const returnsTurn: ScriptedTurn = (request) => {
  if (!request.messages.some((m) => m.role === "tool")) {
    return callTool(BookPickupTool, { orderId: "ord_2231" }, [
      DamageRefundTool,
      { orderId: "ord_2231", paidCents: 5490 },
    ]);
  }
  return replyWith(
    `Pickup: ${outcomeOf(request, "book-pickup-tool")}. Refund: ${outcomeOf(request, "damage-refund-tool")}.`,
  );
};
