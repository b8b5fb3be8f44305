import { type ChatRequest, callTool, replyWith, type ScriptedTurn } from "@agboss/core";
import { ReserveBudgetTool, SignContractTool } from "./review-tools.js";

/** What the tool's message in the conversation says: its status, or why it did not run. */
function outcomeOf(request: ChatRequest): string | undefined {
  const message = request.messages.findLast((m) => m.role === "tool");
  if (message === undefined) return undefined;
  if (message.content.startsWith("Tool error:")) return message.content.slice("Tool error:".length).trim();
  return (JSON.parse(message.content) as { status: string }).status;
}

// Each scripted move reads the conversation, so any process can play it: with no tool result yet the
// agent calls its tool (a question to the owner), then it reports what came of it.

/** Legal: signs the contract, then reports. */
export const legalTurn: ScriptedTurn = (request) => {
  const outcome = outcomeOf(request);
  if (outcome === undefined)
    return callTool(SignContractTool, { supplier: "Acme Corp", contractId: "ctr_2291" });
  return replyWith(`Legal: ${outcome}.`);
};

/** Finance: reserves the budget, then reports. */
export const financeTurn: ScriptedTurn = (request) => {
  const outcome = outcomeOf(request);
  if (outcome === undefined)
    return callTool(ReserveBudgetTool, { costCenter: "CC-410", amountCents: 4_800_000 });
  return replyWith(`Finance: ${outcome}.`);
};

/** Ops: answers at once. */
export const opsTurn: ScriptedTurn = replyWith("Ops: delivery fits the week 32 slot.");

/** The join hands on `{ results: [{ branch, index, output | error | withdrawn }] }`: one line per branch. */
export const summaryTurn: ScriptedTurn = (request) => {
  const joined = request.messages.findLast((m) => m.role === "user")?.content ?? "{}";
  const { results } = JSON.parse(joined) as {
    results: { branch: string; output?: { text: string }; error?: { message: string } }[];
  };
  const lines = results.map((r) => r.output?.text ?? `${r.branch} failed: ${r.error?.message ?? "?"}`);
  return replyWith(lines.join(" "));
};
