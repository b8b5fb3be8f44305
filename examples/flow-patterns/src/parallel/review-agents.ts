import { Agent } from "@agboss/core";
import { ReserveBudgetTool, SignContractTool } from "./review-tools.js";

/** Signs the contract; that needs the owner's yes. */
@Agent({
  name: "legal-agent",
  description: "Reviews and signs supplier contracts",
  prompt: "Review the request as legal; sign the contract if it is sound.",
  model: "scripted/legal",
  tools: [SignContractTool],
})
export class LegalAgent {}

/** Reserves the budget; that needs the owner's yes. */
@Agent({
  name: "finance-agent",
  description: "Reserves budget for purchases",
  prompt: "Review the request as finance; reserve the budget it needs.",
  model: "scripted/finance",
  tools: [ReserveBudgetTool],
})
export class FinanceAgent {}

/** Checks delivery capacity; needs nobody, so it finishes at once. */
@Agent({
  name: "ops-agent",
  description: "Checks delivery capacity",
  prompt: "Review the request as operations.",
  model: "scripted/ops",
})
export class OpsAgent {}

/** Reads the three reviews (the join's results) and sums them up. */
@Agent({
  name: "summary-agent",
  description: "Sums up the reviews",
  prompt: "Sum up the three reviews for the requester.",
  model: "scripted/summary",
})
export class SummaryAgent {}
