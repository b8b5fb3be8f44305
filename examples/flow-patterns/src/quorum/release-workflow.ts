import {
  type QuorumPredicate,
  start,
  Workflow,
  WorkflowFinish,
  WorkflowFinishTextDto,
  WorkflowStart,
  WorkflowStartTextDto,
} from "@agboss/core";
import {
  FinanceReviewerAgent,
  LegalReviewerAgent,
  ReleaseAgent,
  SecurityReviewerAgent,
} from "./release-agents.js";

/** A release to review. */
@WorkflowStart({ name: "release-workflow-start", description: "A release", input: WorkflowStartTextDto })
export class ReleaseWorkflowStart {}

/** The release decision. */
@WorkflowFinish({
  name: "release-workflow-finish",
  description: "The decision",
  output: WorkflowFinishTextDto,
})
export class ReleaseWorkflowFinish {}

/** A reviewer counts when it approved. */
const approved: QuorumPredicate = (output) => (output as { text?: string }).text === "approve";

/** Three reviewers at once; two approvals decide, and the third question is taken back. */
@Workflow({
  name: "release-workflow",
  version: "1.0.0",
  flow: [
    start(ReleaseWorkflowStart)
      .returns(WorkflowStartTextDto)
      .toParallel([LegalReviewerAgent, SecurityReviewerAgent, FinanceReviewerAgent])
      .joinQuorum({ max: 2, count: approved })
      .toAgent(ReleaseAgent)
      .toFinish(ReleaseWorkflowFinish),
  ],
})
export class ReleaseWorkflow {}
