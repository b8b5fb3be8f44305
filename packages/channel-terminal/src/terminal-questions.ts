import {
  type ChannelAsk,
  ChannelOutcome,
  type ChannelRef,
  type ChannelReminder,
  type ChannelWithdrawal,
  type ExecutionContext,
  PauseKind,
  PauseResolution,
} from "@agboss/core";
import type { TerminalOutput } from "./terminal-output.js";
import type { TerminalQuestionsOptions } from "./terminal-questions-options.js";

/**
 * What a channel does to leave a question for the thread's owner to answer in the terminal: it notes
 * the question (never its arguments, which may be sensitive) and returns `ChannelOutcome.awaitReply()`.
 * The question itself rests in the store, so {@link answerInTerminal} can answer it from any process.
 *
 * {@link TerminalUserChannel} uses it for approvals. A channel role cannot be named by a tool as is,
 * so a question role (`ask` + `answer`) answered in the terminal needs a small `@Channel` that extends
 * the role and hands `send`, `withdraw` and `remind` to this class. Give the role
 * `answeredBy: PauseAnswerer.ThreadOwner`, and pass the role to `answerInTerminal({ roles })`.
 *
 * @example
 * @Channel({ name: "terminal-pickup-slot-channel", description: "The customer picks a slot in the terminal", deps: [ExecutionContext] })
 * export class TerminalPickupSlotChannel extends PickupSlotChannel {
 *   readonly #terminal: TerminalQuestions;
 *   constructor(context: ExecutionContext) {
 *     super();
 *     this.#terminal = new TerminalQuestions(context);
 *   }
 *   send(ask: ChannelAsk<PickupSlotChannel>) {
 *     return this.#terminal.send(ask);
 *   }
 *   override withdraw(withdrawal: ChannelWithdrawal<PickupSlotChannel>) {
 *     return this.#terminal.withdraw(withdrawal);
 *   }
 * }
 */
/** Why a question was taken back, as the terminal says it. */
const WHY: Readonly<Record<ChannelWithdrawal["resolution"], string>> = {
  [PauseResolution.Withdrawn]: "no longer needed",
  [PauseResolution.Cancelled]: "cancelled",
  [PauseResolution.Escalated]: "escalated: nobody answered in time, someone else was asked",
  [PauseResolution.Expired]: "expired: nobody answered in time",
};

export class TerminalQuestions {
  readonly #context: ExecutionContext;
  readonly #output: TerminalOutput | null;

  /** `context` is the application's `ExecutionContext` (declare it in the channel's `deps`). */
  constructor(context: ExecutionContext, options: TerminalQuestionsOptions = {}) {
    this.#context = context;
    this.#output = options.output === undefined ? process.stdout : options.output;
  }

  /**
   * Notes that the thread's owner was asked, and waits for their answer. `ref` is kept with the pause
   * and handed back to `withdraw`, as with `ChannelOutcome.awaitReply({ ref })`.
   */
  send<TRole = unknown>(
    ask: ChannelAsk<TRole>,
    options: { readonly ref?: ChannelRef } = {},
  ): Promise<ChannelOutcome<TRole>> {
    const { ownerId, threadId } = this.#context;
    const what = ask.kind === PauseKind.Question ? "a question about" : "about";
    this.#write(`• asked ${ownerId} ${what} ${ask.value.tool} (thread ${threadId}); it waits for the answer`);
    return Promise.resolve(ChannelOutcome.awaitReply<TRole>(options));
  }

  /** Notes that a question was taken back before anyone answered it. */
  withdraw<TRole = unknown>(withdrawal: ChannelWithdrawal<TRole>): Promise<void> {
    this.#write(`• took back the question about ${withdrawal.value.tool} (${WHY[withdrawal.resolution]})`);
    return Promise.resolve();
  }

  /** Notes that a question is still waiting for its answer (a role's `remindEvery`). */
  remind<TRole = unknown>(reminder: ChannelReminder<TRole>): Promise<void> {
    const { ownerId, threadId } = this.#context;
    this.#write(
      `• reminder ${reminder.reminder}: ${ownerId} has not answered the question about ${reminder.value.tool} (thread ${threadId}) asked ${reminder.askedAt}`,
    );
    return Promise.resolve();
  }

  #write(line: string): void {
    this.#output?.write(`${line}\n`);
  }
}
