import { TerminalUserChannel } from "@agboss/channel-terminal";
import { Tool, type ToolHandler } from "@agboss/core";
import { ReserveBudgetDto, ReviewDoneDto, SignContractDto } from "./review-dtos.js";
import { ReviewLedger } from "./review-ledger.js";

/** Signs the contract, once the thread's owner approved it in the terminal. */
@Tool({
  name: "sign-contract-tool",
  description: "Signs a supplier contract",
  input: SignContractDto,
  output: ReviewDoneDto,
  channel: TerminalUserChannel,
  deps: [ReviewLedger],
})
export class SignContractTool implements ToolHandler<SignContractDto, ReviewDoneDto> {
  constructor(private readonly ledger: ReviewLedger) {}

  run({ supplier, contractId }: SignContractDto): Promise<ReviewDoneDto> {
    this.ledger.runs.push("sign-contract-tool");
    return Promise.resolve({ status: `signed ${contractId} with ${supplier}` });
  }
}

/** Reserves budget, once the thread's owner approved it in the terminal. */
@Tool({
  name: "reserve-budget-tool",
  description: "Reserves budget on a cost center",
  input: ReserveBudgetDto,
  output: ReviewDoneDto,
  channel: TerminalUserChannel,
  deps: [ReviewLedger],
})
export class ReserveBudgetTool implements ToolHandler<ReserveBudgetDto, ReviewDoneDto> {
  constructor(private readonly ledger: ReviewLedger) {}

  run({ costCenter, amountCents }: ReserveBudgetDto): Promise<ReviewDoneDto> {
    this.ledger.runs.push("reserve-budget-tool");
    return Promise.resolve({ status: `reserved ${(amountCents / 100).toFixed(2)} EUR on ${costCenter}` });
  }
}
