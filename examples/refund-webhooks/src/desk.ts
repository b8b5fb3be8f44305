import {
  Agent,
  Application,
  start,
  Workflow,
  WorkflowFinish,
  WorkflowFinishTextDto,
  WorkflowStart,
} from "@agboss/core";
import { DamageRefundTool, OutboxDamageAssessmentChannel } from "./damage-assessment.js";
import { RefundRequestDto } from "./dtos.js";
import { GoodwillCreditTool, OutboxGoodwillApprovalChannel } from "./goodwill-approval.js";
import { AGENT_MODEL } from "./model-ids.js";
import { Outbox } from "./outbox.js";
import { CardPayments } from "./payments.js";
import { OutboxRefundApprovalChannel, RefundCardTool } from "./refund-approval.js";

/** Handles one customer request about one order: money back, a store credit, or a damage claim. */
@Agent({
  name: "refund-desk-agent",
  description: "Settles customer complaints about an order",
  prompt: [
    "You work at a shop's refund desk. The message is a JSON object: the order (orderId), the amount in cents (amountCents) and what the customer wrote (text).",
    "If the customer asks for a store credit, voucher or goodwill gesture, call goodwill-credit-tool with the order id and the amount.",
    "If the customer reports that the item arrived damaged, call damage-refund-tool with the order id and the amount; a warehouse lead decides how much of it to refund.",
    "Otherwise call refund-card-tool with the order id and the amount.",
    "Call exactly one tool, once. Then tell the customer in one or two sentences what happened; if the call was rejected, say why.",
  ].join(" "),
  model: AGENT_MODEL,
  tools: [RefundCardTool, GoodwillCreditTool, DamageRefundTool],
})
export class RefundDeskAgent {}

/** A customer's request: the order, the amount and their words. */
@WorkflowStart({
  name: "refund-desk-workflow-start",
  description: "A refund request",
  input: RefundRequestDto,
})
export class RefundDeskWorkflowStart {}

/** What the desk tells the customer. */
@WorkflowFinish({
  name: "refund-desk-workflow-finish",
  description: "The answer to the customer",
  output: WorkflowFinishTextDto,
})
export class RefundDeskWorkflowFinish {}

@Workflow({
  name: "refund-desk-workflow",
  version: "1.0.0",
  flow: [
    start(RefundDeskWorkflowStart)
      .returns(RefundRequestDto)
      .toAgent(RefundDeskAgent)
      .toFinish(RefundDeskWorkflowFinish),
  ],
})
export class RefundDeskWorkflow {}

/**
 * The refund desk. Its model provider is not listed here: the server picks the scripted one or an
 * OpenAI-compatible one at startup and passes it to `createApp` (`modelProvidersFor` in models.ts).
 */
@Application({
  name: "refund-desk-application",
  workflows: [RefundDeskWorkflow],
  providers: [
    Outbox,
    CardPayments,
    OutboxRefundApprovalChannel,
    OutboxGoodwillApprovalChannel,
    OutboxDamageAssessmentChannel,
  ],
})
export class RefundDeskApplication {}
