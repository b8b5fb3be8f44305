/** A question {@link TerminalUserChannel} asked and nobody answered yet, as the terminal shows it. */
export interface OpenQuestion {
  /** What `app.resume` takes. */
  readonly pauseId: string;
  /** The tool whose call waits. */
  readonly tool: string;
  /** The agent that called it. */
  readonly agent: string;
  /** The call's arguments, sensitive fields masked. */
  readonly arguments: Readonly<Record<string, unknown>>;
  /** The conversation it waits in. */
  readonly threadId: string;
  /** The execution it waits in. */
  readonly executionId: string;
  /** ISO 8601, on the application's Clock. */
  readonly askedAt: string;
}
