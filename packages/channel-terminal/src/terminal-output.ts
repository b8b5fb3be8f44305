/** Where the terminal channel and its UI write text: `process.stdout`, a stream, or anything with `write`. */
export interface TerminalOutput {
  /** Writes a chunk of text as is. */
  write(text: string): unknown;
}
