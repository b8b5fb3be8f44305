import { start, Workflow, WorkflowStartTextDto } from "@agboss/core";
import { RefundDeskAgent } from "./refund-desk-agent.js";
import { RefundDeskWorkflowFinish } from "./refund-desk-workflow-finish.js";
import { RefundDeskWorkflowStart } from "./refund-desk-workflow-start.js";

@Workflow({
  name: "refund-desk-workflow",
  version: "1.0.0",
  description: "A customer's message, answered by the refund desk agent",
  flow: [
    start(RefundDeskWorkflowStart)
      .returns(WorkflowStartTextDto)
      .toAgent(RefundDeskAgent)
      .toFinish(RefundDeskWorkflowFinish),
  ],
})
export class RefundDeskWorkflow {}
