import { type ChatRequest, callTool, replyWith } from "@agboss/core";
import type { ModelScript, ModelTurn } from "@agboss/testing";
import { ApprovedRefundTool, BookExpenseTool } from "./fixtures/approval-app.js";
import { FinanceAgent, LegalAgent, OpsAgent, SummaryAgent } from "./fixtures/parallel-app.js";

/** The last user message of a model request. */
export const lastUser = (r: ChatRequest) =>
  [...r.messages].reverse().find((m) => m.role === "user")?.content ?? "";

/**
 * Scripts the review workflow's branches: legal asks for a refund approval (Channel), finance for an
 * expense approval (owner), ops just answers, and the summary agent answers `summary` (by default, how
 * long the joined results are); returns the summary agent's script.
 */
export function scriptTwoPauses(
  mockLlm: (c: unknown) => ModelScript,
  summary: ModelTurn = (r) => replyWith(`summary of ${lastUser(r).length} chars`),
) {
  mockLlm(LegalAgent).thenReturn(
    callTool(ApprovedRefundTool, { orderId: "ord_1", amountCents: 100 }),
    replyWith("legal ok"),
  );
  mockLlm(FinanceAgent).thenReturn(
    callTool(BookExpenseTool, { purpose: "audit", amountCents: 200 }),
    replyWith("finance ok"),
  );
  mockLlm(OpsAgent).thenReturn(replyWith("ops ok"));
  return mockLlm(SummaryAgent).thenReturn(summary);
}
