import {
  Channel,
  type ChannelAsk,
  type ChannelHandler,
  type ChannelOutcome,
  type ChannelReminder,
  type ChannelWithdrawal,
  ExecutionContext,
  type Provider,
} from "@agboss/core";
import type { TerminalOutput } from "./terminal-output.js";
import { TerminalQuestions } from "./terminal-questions.js";
import { TERMINAL_USER_CHANNEL } from "./terminal-user-channel-name.js";
import type { TerminalUserChannelOptions } from "./terminal-user-channel-options.js";

/**
 * Asks the thread's owner in the terminal. A tool names it as is, so its pauses are answered by the
 * thread's owner (`PauseAnswerer.ThreadOwner`): their ids are in `result.pending` and in
 * `app.pauses.list({ role: "terminal-user-channel" })`, and {@link answerInTerminal} answers them.
 *
 * `send` only notes that a question waits and returns `ChannelOutcome.awaitReply()`: the question
 * itself lives in the store, so any process over the same store can answer it later.
 *
 * @example
 * @Tool({ name: "refund-card-tool", description: "Refunds a card", input: RefundDto, output: DoneDto, channel: TerminalUserChannel })
 * export class RefundCardTool implements ToolHandler<RefundDto, DoneDto> { … }
 */
@Channel({
  name: TERMINAL_USER_CHANNEL,
  description: "Asks the thread's owner in the terminal",
  deps: [ExecutionContext],
})
export class TerminalUserChannel implements ChannelHandler {
  readonly #terminal: TerminalQuestions;

  /** The container creates it; use {@link TerminalUserChannel.writingTo} to choose where it writes. */
  constructor(context: ExecutionContext, options: TerminalUserChannelOptions = {}) {
    this.#terminal = new TerminalQuestions(context, options);
  }

  /**
   * A provider for `createApp({ providers })` or `@Application({ providers })` that makes the channel
   * write somewhere else than `process.stdout` (`null`: nowhere), e.g. in tests.
   *
   * @example
   * const app = await createApp(OfficeApplication, { providers: [TerminalUserChannel.writingTo(null)] });
   */
  static writingTo(output: TerminalOutput | null): Provider {
    return {
      provide: TerminalUserChannel,
      useFactory: (context: ExecutionContext) => new TerminalUserChannel(context, { output }),
      deps: [ExecutionContext],
    };
  }

  /** Notes the question (never its arguments, which may be sensitive) and waits for the owner's answer. */
  send(ask: ChannelAsk): Promise<ChannelOutcome> {
    return this.#terminal.send(ask);
  }

  /** Notes that a question was taken back before anyone answered it. */
  withdraw(withdrawal: ChannelWithdrawal): Promise<void> {
    return this.#terminal.withdraw(withdrawal);
  }

  /** Notes that a question is still waiting, when the tool's `deadlines` remind. */
  remind(reminder: ChannelReminder): Promise<void> {
    return this.#terminal.remind(reminder);
  }
}
