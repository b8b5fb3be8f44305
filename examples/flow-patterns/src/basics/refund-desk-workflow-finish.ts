import { WorkflowFinish, WorkflowFinishTextDto } from "@agboss/core";

@WorkflowFinish({
  name: "refund-desk-workflow-finish",
  description: "The desk's answer to the customer",
  output: WorkflowFinishTextDto,
})
export class RefundDeskWorkflowFinish {}
