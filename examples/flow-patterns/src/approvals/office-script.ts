import { type ChatRequest, callTool, replyWith, type ScriptedTurn } from "@agboss/core";
import { ExpenseTool } from "./expense-tool.js";
import { RefundTool } from "./refund-tool.js";

/** What a tool's message in the conversation says: its status, or why it did not run. */
function outcomeOf(request: ChatRequest, tool: string): string {
  const message = request.messages.findLast((m) => m.role === "tool" && m.name === tool);
  if (message === undefined) return "no answer";
  if (message.content.startsWith("Tool error:")) return message.content.slice("Tool error:".length).trim();
  return (JSON.parse(message.content) as { status: string }).status;
}

/**
 * The office model's one scripted move, read from the conversation so any process can play it: with no
 * tool results yet it calls both tools in one turn (two questions at once), then it reports both.
 */
export const officeTurn: ScriptedTurn = (request) => {
  if (!request.messages.some((m) => m.role === "tool")) {
    return callTool(RefundTool, { orderId: "ord_1042", amountCents: 12990, cardNumber: "4242424242424242" }, [
      ExpenseTool,
      { purpose: "taxi to the client", amountCents: 2350 },
    ]);
  }
  return replyWith(
    `Refund: ${outcomeOf(request, "refund-tool")}. Expense: ${outcomeOf(request, "expense-tool")}.`,
  );
};
