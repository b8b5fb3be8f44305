import type { QuestionsFor } from "./open-questions.js";

/** Options of {@link answerInTerminal}. */
export interface AnswerInTerminalOptions extends QuestionsFor {
  /** Where keys come from. Default `process.stdin`. */
  readonly input?: NodeJS.ReadableStream;
  /** Where the questions and results go. Default `process.stdout`. */
  readonly output?: NodeJS.WritableStream;
  /** Ask `app.resume` for the execution record (`result.record`, with its audit trail `pauses`). */
  readonly record?: boolean;
  /**
   * Show what the execution does after each answer while it works (the tools it runs, the questions it
   * asks next), with `showProgress` over `app.streamResume`. Default `true`.
   */
  readonly progress?: boolean;
  /** Stops the session at the next prompt, as if the person had quit. */
  readonly signal?: AbortSignal;
}
