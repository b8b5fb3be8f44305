import { TerminalQuestions } from "@agboss/channel-terminal";
import {
  Channel,
  type ChannelAsk,
  type ChannelOutcome,
  type ChannelWithdrawal,
  ExecutionContext,
} from "@agboss/core";
import { PickupSlotChannel } from "./pickup-slot-channel.js";

/** Implements the pickup question in the terminal: it notes the question and waits for answerInTerminal. */
@Channel({
  name: "terminal-pickup-slot-channel",
  description: "Asks the desk for a pickup slot in the terminal",
  deps: [ExecutionContext],
})
export class TerminalPickupSlotChannel extends PickupSlotChannel {
  readonly #terminal: TerminalQuestions;

  constructor(context: ExecutionContext) {
    super();
    this.#terminal = new TerminalQuestions(context);
  }

  send(ask: ChannelAsk<PickupSlotChannel>): Promise<ChannelOutcome<PickupSlotChannel>> {
    return this.#terminal.send(ask);
  }

  override withdraw(withdrawal: ChannelWithdrawal<PickupSlotChannel>): Promise<void> {
    return this.#terminal.withdraw(withdrawal);
  }
}
