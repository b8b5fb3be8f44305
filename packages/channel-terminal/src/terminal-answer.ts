import type { ExecutionOutput, ToolCallApprovalDecisionDto } from "@agboss/core";
import type { OpenQuestion } from "./open-question.js";

/** One question answered in the terminal, and what the resume returned. */
export interface TerminalAnswer {
  /** The question, as it was listed. */
  readonly question: OpenQuestion;
  /** The decision given to `app.resume`. */
  readonly decision: ToolCallApprovalDecisionDto;
  /** What `app.resume` returned: the execution paused again with the rest, or finished. */
  readonly result: ExecutionOutput;
}
