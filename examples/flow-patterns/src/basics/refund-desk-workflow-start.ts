import { WorkflowStart, WorkflowStartTextDto } from "@agboss/core";

@WorkflowStart({
  name: "refund-desk-workflow-start",
  description: "A customer's message to the refund desk",
  input: WorkflowStartTextDto,
})
export class RefundDeskWorkflowStart {}
