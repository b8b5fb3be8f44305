import {
  start,
  Workflow,
  WorkflowFinish,
  WorkflowFinishTextDto,
  WorkflowStart,
  WorkflowStartTextDto,
} from "@agboss/core";
import { OfficeAgent } from "./office-agent.js";

/** A request to the office. */
@WorkflowStart({ name: "office-workflow-start", description: "A request", input: WorkflowStartTextDto })
export class OfficeWorkflowStart {}

/** The office's answer. */
@WorkflowFinish({ name: "office-workflow-finish", description: "The answer", output: WorkflowFinishTextDto })
export class OfficeWorkflowFinish {}

/** A request, the office agent, its answer. */
@Workflow({
  name: "office-workflow",
  version: "1.0.0",
  flow: [
    start(OfficeWorkflowStart)
      .returns(WorkflowStartTextDto)
      .toAgent(OfficeAgent)
      .toFinish(OfficeWorkflowFinish),
  ],
})
export class OfficeWorkflow {}
