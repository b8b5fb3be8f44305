import { TerminalUserChannel } from "@agboss/channel-terminal";
import { days, ExpiryOutcome, hours, Tool, type ToolHandler } from "@agboss/core";
import { OfficeDoneDto } from "./office-done-dto.js";
import { OfficeLedger } from "./office-ledger.js";
import { RefundRequestDto } from "./refund-request-dto.js";

/**
 * Refunds a card, once the thread's owner approved it in the terminal. A refund does not wait forever:
 * the owner is reminded every four hours, and after two days without an answer it is rejected.
 */
@Tool({
  name: "refund-tool",
  description: "Refunds a card payment",
  input: RefundRequestDto,
  output: OfficeDoneDto,
  channel: TerminalUserChannel,
  deadlines: {
    remindEvery: hours(4),
    expire: { after: days(2), outcome: ExpiryOutcome.reject("nobody approved the refund within two days") },
  },
  deps: [OfficeLedger],
})
export class RefundTool implements ToolHandler<RefundRequestDto, OfficeDoneDto> {
  constructor(private readonly ledger: OfficeLedger) {}

  run({ orderId, amountCents }: RefundRequestDto): Promise<OfficeDoneDto> {
    this.ledger.runs.push("refund-tool");
    return Promise.resolve({ status: `refunded ${(amountCents / 100).toFixed(2)} EUR for ${orderId}` });
  }
}
