import type { TerminalQuestionsOptions } from "./terminal-questions-options.js";

/** Options of {@link TerminalUserChannel}, given through `TerminalUserChannel.writingTo(…)`. */
export interface TerminalUserChannelOptions extends TerminalQuestionsOptions {}
