import {
  FailurePolicy,
  start,
  Workflow,
  WorkflowFinish,
  WorkflowFinishTextDto,
  WorkflowStart,
  WorkflowStartTextDto,
} from "@agboss/core";
import { FinanceAgent, LegalAgent, OpsAgent, SummaryAgent } from "./review-agents.js";

/** A purchase to review. */
@WorkflowStart({
  name: "review-workflow-start",
  description: "A purchase to review",
  input: WorkflowStartTextDto,
})
export class ReviewWorkflowStart {}

/** The summary of the three reviews. */
@WorkflowFinish({ name: "review-workflow-finish", description: "The summary", output: WorkflowFinishTextDto })
export class ReviewWorkflowFinish {}

/**
 * One request, three reviews at once, one summary. Two branches at a time: legal and finance start,
 * pause on their questions and give their slots back, so ops runs in the same call. CollectAll: the
 * summary hears from every branch, whatever each one's outcome.
 */
@Workflow({
  name: "review-workflow",
  version: "1.0.0",
  flow: [
    start(ReviewWorkflowStart)
      .returns(WorkflowStartTextDto)
      .toParallel([LegalAgent, FinanceAgent, OpsAgent], {
        failurePolicy: FailurePolicy.CollectAll,
        maxConcurrency: 2,
      })
      .toAgent(SummaryAgent)
      .toFinish(ReviewWorkflowFinish),
  ],
})
export class ReviewWorkflow {}
