import { Application } from "@agboss/core";
import { ReviewLedger } from "./review-ledger.js";
import { ReviewModelProvider } from "./review-model-provider.js";
import { ReviewWorkflow } from "./review-workflow.js";

/** The purchase review: two of its tools ask the thread's owner in the terminal (TerminalUserChannel). */
@Application({
  name: "review-application",
  workflows: [ReviewWorkflow],
  providers: [ReviewLedger, ReviewModelProvider],
})
export class ReviewApplication {}
