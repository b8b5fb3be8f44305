export {
  FinanceReviewerAgent,
  LegalReviewerAgent,
  ReleaseAgent,
  SecurityReviewerAgent,
} from "./release-agents.js";
export { ReleaseApplication } from "./release-application.js";
export { ReleaseModelProvider } from "./release-model-provider.js";
export { releaseTurn, reviewerTurn } from "./release-script.js";
export { ReleaseWorkflow, ReleaseWorkflowFinish, ReleaseWorkflowStart } from "./release-workflow.js";
export { SignedDto, SignOffDto } from "./sign-off-dto.js";
export { SignOffTool } from "./sign-off-tool.js";
