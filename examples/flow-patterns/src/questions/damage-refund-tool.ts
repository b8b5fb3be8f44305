import { Tool, type ToolHandler } from "@agboss/core";
import { DamageAssessmentChannel } from "./damage-assessment-channel.js";
import type { DamageAssessmentDto } from "./damage-assessment-dto.js";
import { DamageClaimDto } from "./damage-claim-dto.js";
import { ReturnsDoneDto } from "./returns-done-dto.js";
import { ReturnsLedger } from "./returns-ledger.js";

function euros(cents: number): string {
  return `${(cents / 100).toFixed(2)} EUR`;
}

/** Refunds as much of a damaged order as the desk decided. */
@Tool({
  name: "damage-refund-tool",
  description: "Refunds part or all of a damaged order",
  input: DamageClaimDto,
  output: ReturnsDoneDto,
  channel: DamageAssessmentChannel,
  deps: [ReturnsLedger],
})
export class DamageRefundTool implements ToolHandler<DamageClaimDto, ReturnsDoneDto, DamageAssessmentDto> {
  constructor(private readonly ledger: ReturnsLedger) {}

  run({ orderId, paidCents }: DamageClaimDto, assessment: DamageAssessmentDto): Promise<ReturnsDoneDto> {
    if (assessment.refundCents > paidCents) {
      throw new Error(
        `the desk answered ${euros(assessment.refundCents)}, more than the ${euros(paidCents)} paid`,
      );
    }
    this.ledger.runs.push("damage-refund-tool");
    const shelf = assessment.restock ? "back on the shelf" : "written off";
    return Promise.resolve({
      status: `refunded ${euros(assessment.refundCents)} of ${euros(paidCents)} for ${orderId}, item ${shelf}`,
    });
  }
}
