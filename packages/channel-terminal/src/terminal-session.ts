import type { TerminalAnswer } from "./terminal-answer.js";

/** Why a terminal session ended. */
export const TerminalSessionEnd = {
  /** Every question the owner had was answered (or there were none). */
  NoneOpen: "none-open",
  /** The person chose to answer the rest later. */
  Quit: "quit",
  /** Ctrl-C, the input closed, or the caller's signal aborted. */
  Interrupted: "interrupted",
} as const;
export type TerminalSessionEnd = (typeof TerminalSessionEnd)[keyof typeof TerminalSessionEnd];

/** What {@link answerInTerminal} returns. */
export interface TerminalSession {
  /** The questions answered, in the order they were answered. */
  readonly answers: readonly TerminalAnswer[];
  /** Why it ended. */
  readonly end: TerminalSessionEnd;
}
