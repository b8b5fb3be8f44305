// A small application for `agboss types` ([RP-12]): a tool behind a channel role with a code reply
// interpreter, and a tool whose class does not declare its types.
import {
  Agent,
  Application,
  start,
  Workflow,
  WorkflowFinish,
  WorkflowFinishTextDto,
  WorkflowStart,
  WorkflowStartTextDto,
} from "@agboss/core";
import { FinanceRoomRefundApprovalChannel } from "./refund-approval.channel.js";
import { OrderLookupTool, RefundCardTool } from "./tools.js";

// a re-export: the declarations must still name the module that declares the DTO
export { RefundCardInputDto } from "./dtos.js";

/** Refunds orders. */
@Agent({
  name: "refund-agent",
  description: "Refunds orders",
  prompt: "Refund what is asked.",
  model: "scripted/refunds",
  tools: [RefundCardTool, OrderLookupTool],
})
export class RefundAgent {}

/** A request in words. */
@WorkflowStart({ name: "refund-workflow-start", description: "A request", input: WorkflowStartTextDto })
export class RefundWorkflowStart {}

/** The answer in words. */
@WorkflowFinish({ name: "refund-workflow-finish", description: "The answer", output: WorkflowFinishTextDto })
export class RefundWorkflowFinish {}

/** One agent between a start and a finish. */
@Workflow({
  name: "refund-workflow",
  version: "1.0.0",
  flow: [start(RefundWorkflowStart).toAgent(RefundAgent).toFinish(RefundWorkflowFinish)],
})
export class RefundWorkflow {}

/** The typed fixture's application. */
@Application({
  name: "typed-refund-application",
  workflows: [RefundWorkflow],
  providers: [FinanceRoomRefundApprovalChannel],
})
export class TypedRefundApplication {}
