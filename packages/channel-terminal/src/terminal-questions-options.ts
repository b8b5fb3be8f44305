import type { TerminalOutput } from "./terminal-output.js";

/** Options of {@link TerminalQuestions}. */
export interface TerminalQuestionsOptions {
  /** Where it notes the questions it asks and takes back. Default `process.stdout`; `null` writes nothing. */
  readonly output?: TerminalOutput | null;
}
