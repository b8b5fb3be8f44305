import type { DtoClass, PauseKind } from "@agboss/core";

/** A question asked in the terminal that nobody answered yet, as the terminal shows it. */
export interface OpenQuestion {
  /** What `app.resume` takes. */
  readonly pauseId: string;
  /**
   * `approval` (approve or reject the call) or `question` (answer with {@link OpenQuestion.answer},
   * a value of the role's answer DTO).
   */
  readonly kind: PauseKind;
  /** The channel asked: `terminal-user-channel`, or the name of a role given in `roles`. */
  readonly channel: string;
  /** What the channel is for, as it describes itself. */
  readonly channelDescription: string;
  /** For a question: the DTO the answer must be a value of. Undefined for an approval. */
  readonly answer: DtoClass | undefined;
  /** True when the role reads free-text replies (it has a reply interpreter). */
  readonly readsReplies: boolean;
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
