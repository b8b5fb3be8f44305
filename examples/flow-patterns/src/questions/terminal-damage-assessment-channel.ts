import { TerminalQuestions } from "@agboss/channel-terminal";
import {
  Channel,
  type ChannelAsk,
  type ChannelOutcome,
  type ChannelWithdrawal,
  ExecutionContext,
} from "@agboss/core";
import { DamageAssessmentChannel } from "./damage-assessment-channel.js";

/** Implements the damage question in the terminal: it notes the question and waits for answerInTerminal. */
@Channel({
  name: "terminal-damage-assessment-channel",
  description: "Asks the desk about a damaged order in the terminal",
  deps: [ExecutionContext],
})
export class TerminalDamageAssessmentChannel extends DamageAssessmentChannel {
  readonly #terminal: TerminalQuestions;

  constructor(context: ExecutionContext) {
    super();
    this.#terminal = new TerminalQuestions(context);
  }

  send(ask: ChannelAsk<DamageAssessmentChannel>): Promise<ChannelOutcome<DamageAssessmentChannel>> {
    return this.#terminal.send(ask);
  }

  override withdraw(withdrawal: ChannelWithdrawal<DamageAssessmentChannel>): Promise<void> {
    return this.#terminal.withdraw(withdrawal);
  }
}
