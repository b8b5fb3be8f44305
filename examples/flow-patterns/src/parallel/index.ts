export { FinanceAgent, LegalAgent, OpsAgent, SummaryAgent } from "./review-agents.js";
export { ReviewApplication } from "./review-application.js";
export { ReserveBudgetDto, ReviewDoneDto, SignContractDto } from "./review-dtos.js";
export { ReviewLedger } from "./review-ledger.js";
export { ReviewModelProvider } from "./review-model-provider.js";
export { financeTurn, legalTurn, opsTurn, summaryTurn } from "./review-script.js";
export { ReserveBudgetTool, SignContractTool } from "./review-tools.js";
export { ReviewWorkflow, ReviewWorkflowFinish, ReviewWorkflowStart } from "./review-workflow.js";
