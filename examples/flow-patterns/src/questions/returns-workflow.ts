import {
  start,
  Workflow,
  WorkflowFinish,
  WorkflowFinishTextDto,
  WorkflowStart,
  WorkflowStartTextDto,
} from "@agboss/core";
import { ReturnsAgent } from "./returns-agent.js";

/** A return the desk reports. */
@WorkflowStart({
  name: "returns-workflow-start",
  description: "A return to arrange",
  input: WorkflowStartTextDto,
})
export class ReturnsWorkflowStart {}

/** What was arranged. */
@WorkflowFinish({
  name: "returns-workflow-finish",
  description: "What was arranged",
  output: WorkflowFinishTextDto,
})
export class ReturnsWorkflowFinish {}

/** A return, the returns agent, its report. */
@Workflow({
  name: "returns-workflow",
  version: "1.0.0",
  flow: [
    start(ReturnsWorkflowStart)
      .returns(WorkflowStartTextDto)
      .toAgent(ReturnsAgent)
      .toFinish(ReturnsWorkflowFinish),
  ],
})
export class ReturnsWorkflow {}
