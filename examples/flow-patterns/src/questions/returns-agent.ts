import { Agent } from "@agboss/core";
import { BookPickupTool } from "./book-pickup-tool.js";
import { DamageRefundTool } from "./damage-refund-tool.js";

/** Arranges a return: a courier, and a refund for the damage; both need an answer from the desk. */
@Agent({
  name: "returns-agent",
  description: "Arranges returns of damaged orders",
  prompt: "Book the pickup and refund the damage, then say what was done.",
  model: "scripted/returns",
  tools: [BookPickupTool, DamageRefundTool],
})
export class ReturnsAgent {}
