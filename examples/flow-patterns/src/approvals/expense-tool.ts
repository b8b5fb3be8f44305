import { TerminalUserChannel } from "@agboss/channel-terminal";
import { Tool, type ToolHandler } from "@agboss/core";
import { ExpenseClaimDto } from "./expense-claim-dto.js";
import { OfficeDoneDto } from "./office-done-dto.js";
import { OfficeLedger } from "./office-ledger.js";

/** Books an expense, once the thread's owner approved it in the terminal. */
@Tool({
  name: "expense-tool",
  description: "Books an expense",
  input: ExpenseClaimDto,
  output: OfficeDoneDto,
  channel: TerminalUserChannel,
  deps: [OfficeLedger],
})
export class ExpenseTool implements ToolHandler<ExpenseClaimDto, OfficeDoneDto> {
  constructor(private readonly ledger: OfficeLedger) {}

  run({ purpose, amountCents }: ExpenseClaimDto): Promise<OfficeDoneDto> {
    this.ledger.runs.push("expense-tool");
    return Promise.resolve({ status: `booked ${(amountCents / 100).toFixed(2)} EUR for ${purpose}` });
  }
}
