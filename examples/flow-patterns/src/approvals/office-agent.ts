import { Agent } from "@agboss/core";
import { ExpenseTool } from "./expense-tool.js";
import { RefundTool } from "./refund-tool.js";

/** Refunds orders and books expenses; both need the thread owner's yes. */
@Agent({
  name: "office-agent",
  description: "Refunds orders and books expenses",
  prompt: "Do what is asked, then say what was done.",
  model: "scripted/office",
  tools: [RefundTool, ExpenseTool],
})
export class OfficeAgent {}
