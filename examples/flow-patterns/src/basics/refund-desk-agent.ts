import { Agent } from "@agboss/core";
import { LookupOrderTool } from "./lookup-order-tool.js";
import { RefundCardTool } from "./refund-card-tool.js";

@Agent({
  name: "refund-desk-agent",
  description: "Looks up orders and refunds them",
  prompt:
    "You work a shop's refund desk. Look the order up first, refund at most what was paid, " +
    "then tell the customer in one sentence what you did.",
  model: "gpt-4o-mini",
  tools: [LookupOrderTool, RefundCardTool],
  maxToolLoopIterations: 6,
})
export class RefundDeskAgent {}
