import type { TerminalOutput } from "./terminal-output.js";

/** Options of {@link TerminalUserChannel}, given through `TerminalUserChannel.writingTo(…)`. */
export interface TerminalUserChannelOptions {
  /** Where it notes the questions it asks and takes back. Default `process.stdout`; `null` writes nothing. */
  readonly output?: TerminalOutput | null;
}
