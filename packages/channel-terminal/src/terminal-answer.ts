import type { ExecutionOutput, ToolCallApprovalDecisionDto } from "@agboss/core";
import type { OpenQuestion } from "./open-question.js";

/**
 * One question answered in the terminal, and what the resume returned. Exactly one of `decision`,
 * `answer` and `reply` is set: what was given to `app.resume`.
 */
export interface TerminalAnswer {
  /** The question, as it was listed. */
  readonly question: OpenQuestion;
  /** An approval's decision; undefined when the pause was answered otherwise. */
  readonly decision: ToolCallApprovalDecisionDto | undefined;
  /** A question's answer, a value of its role's answer DTO; undefined when answered otherwise. */
  readonly answer: Readonly<Record<string, unknown>> | undefined;
  /** The words the role's reply interpreter read; undefined when answered otherwise. */
  readonly reply: string | undefined;
  /** What `app.resume` returned: the execution paused again with the rest, or finished. */
  readonly result: ExecutionOutput;
}
