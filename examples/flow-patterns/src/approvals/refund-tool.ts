import { TerminalUserChannel } from "@agboss/channel-terminal";
import { Tool, type ToolHandler } from "@agboss/core";
import { OfficeDoneDto } from "./office-done-dto.js";
import { OfficeLedger } from "./office-ledger.js";
import { RefundRequestDto } from "./refund-request-dto.js";

/** Refunds a card, once the thread's owner approved it in the terminal. */
@Tool({
  name: "refund-tool",
  description: "Refunds a card payment",
  input: RefundRequestDto,
  output: OfficeDoneDto,
  channel: TerminalUserChannel,
  deps: [OfficeLedger],
})
export class RefundTool implements ToolHandler<RefundRequestDto, OfficeDoneDto> {
  constructor(private readonly ledger: OfficeLedger) {}

  run({ orderId, amountCents }: RefundRequestDto): Promise<OfficeDoneDto> {
    this.ledger.runs.push("refund-tool");
    return Promise.resolve({ status: `refunded ${(amountCents / 100).toFixed(2)} EUR for ${orderId}` });
  }
}
