import {
  Channel,
  type ChannelAsk,
  ChannelOf,
  ChannelOutcome,
  ChannelRole,
  type ChannelWithdrawal,
  DecidedBy,
  ExecutionContext,
  type InputOf,
  PauseAnswerer,
  PauseKind,
  parseDto,
  ReplyInterpretation,
  ReplyInterpreter,
  type ReplyInterpreterHandler,
  Tool,
  type ToolHandler,
} from "@agboss/core";
import { DamageAssessmentDto, DamageClaimDto, DeskActionDto } from "./dtos.js";
import { Outbox } from "./outbox.js";
import { CardPayments } from "./payments.js";
import { withdrawalNote } from "./refund-approval.js";

/** What the damage question tells a warehouse lead about answering in words. */
export const DAMAGE_REPLY_HINT =
  'Reply "full", "half", "none" or an amount such as "12.50"; add "restock" if the item can be sold again, and a note for the customer after a colon.';

/** Claims up to this much are refunded in full without asking anyone. */
export const INSPECTION_THRESHOLD_CENTS = 500;

function money(cents: number): string {
  return (cents / 100).toFixed(2);
}

const AMOUNT = /^\d+(?:\.\d{1,2})?$/;

/**
 * Reads a warehouse lead's short reply to a damage claim, with plain code: "full", "half", "none" or
 * an amount ("12.50"), optionally "restock", then a note after a colon ("half, restock: box dented").
 * An amount above what the customer paid, or anything else, is sent back for a clearer answer.
 */
@ReplyInterpreter({
  name: "damage-reply-interpreter",
  description: "Reads how much of a damaged item's price a warehouse lead refunds",
  decidedBy: DecidedBy.Code,
})
export class DamageReplyInterpreter
  implements ReplyInterpreterHandler<DamageReplyInterpreter, DamageAssessmentDto>
{
  interpret({ ask, reply }: InputOf<DamageReplyInterpreter>): ReplyInterpretation<DamageAssessmentDto> {
    const claim = parseDto(DamageClaimDto, ask.arguments, "the damage question");
    const words = reply.trim().replace(/\s+/g, " ");
    const colon = words.indexOf(":");
    const head = (colon === -1 ? words : words.slice(0, colon)).toLowerCase();
    const note = colon === -1 ? "" : words.slice(colon + 1).trim();
    const tokens = head.split(/[\s,;]+/).filter((token) => token !== "" && token !== "and");
    const restock = tokens.includes("restock");
    const amount = tokens.filter((token) => token !== "restock");
    const unreadable = ReplyInterpretation.notUnderstood<DamageAssessmentDto>({
      reason: `I could not read "${words}" as an amount. ${DAMAGE_REPLY_HINT}`,
    });
    if (amount.length !== 1) return unreadable;
    const [word = ""] = amount;
    let refundCents: number;
    if (word === "full") refundCents = claim.amountCents;
    else if (word === "half") refundCents = Math.floor(claim.amountCents / 2);
    else if (word === "none" || word === "nothing") refundCents = 0;
    else if (AMOUNT.test(word)) refundCents = Math.round(Number(word) * 100);
    else return unreadable;
    if (refundCents > claim.amountCents) {
      return ReplyInterpretation.notUnderstood({
        reason: `${money(refundCents)} is more than the ${money(claim.amountCents)} paid for order ${claim.orderId}. ${DAMAGE_REPLY_HINT}`,
      });
    }
    return ReplyInterpretation.understood({ refundCents, restock, ...(note === "" ? {} : { note }) });
  }
}

/**
 * A question role: a warehouse lead looks at a damaged item's photos and says how much to refund. The
 * answer is a `DamageAssessmentDto`, which the tool receives as its second argument.
 */
@ChannelRole({
  name: "damage-assessment-channel",
  description: "A warehouse lead says how much of a damaged item's price to refund",
  ask: DamageClaimDto,
  answer: DamageAssessmentDto,
  answeredBy: PauseAnswerer.Channel,
  replyInterpreter: DamageReplyInterpreter,
})
export abstract class DamageAssessmentChannel extends ChannelOf<DamageAssessmentChannel> {}

/**
 * Posts damage claims to the outbox for the warehouse leads. Small claims are not worth an
 * inspection: the channel answers them at once with a full refund, and the call never pauses.
 */
@Channel({
  name: "outbox-damage-assessment-channel",
  description: "Posts damage claims to the in-process outbox; refunds small ones at once",
  deps: [Outbox, ExecutionContext],
})
export class OutboxDamageAssessmentChannel extends DamageAssessmentChannel {
  constructor(
    private readonly outbox: Outbox,
    private readonly context: ExecutionContext,
  ) {
    super();
  }

  send(ask: ChannelAsk<DamageAssessmentChannel>): Promise<ChannelOutcome<DamageAssessmentChannel>> {
    const { orderId, amountCents } = parseDto(DamageClaimDto, ask.value.arguments, "the damage question");
    if (amountCents <= INSPECTION_THRESHOLD_CENTS) {
      const answer = {
        refundCents: amountCents,
        restock: false,
        note: `small claim (up to ${money(INSPECTION_THRESHOLD_CENTS)}), refunded without inspection`,
      } satisfies DamageAssessmentDto;
      return Promise.resolve(ChannelOutcome.answered(answer));
    }
    this.outbox.post({
      pauseId: ask.pauseId,
      channel: "damage-assessment-channel",
      kind: PauseKind.Question,
      tenantId: this.context.tenant.tenantId,
      threadId: this.context.threadId,
      question: `Order ${orderId} arrived damaged (paid ${money(amountCents)}, reported by ${this.context.ownerId}). How much goes back to the card?`,
      arguments: { ...ask.value.arguments },
      howToAnswer: DAMAGE_REPLY_HINT,
    });
    return Promise.resolve(ChannelOutcome.awaitReply());
  }

  override withdraw(withdrawal: ChannelWithdrawal<DamageAssessmentChannel>): Promise<void> {
    this.outbox.settle(withdrawal.pauseId, "withdrawn", withdrawalNote(withdrawal.resolution));
    return Promise.resolve();
  }
}

/**
 * Refunds a damaged item (through the stand-in processor) by what the warehouse lead settled on: the
 * claim is the tool's input, the lead's assessment its second argument.
 */
@Tool({
  name: "damage-refund-tool",
  description:
    "Refunds an order whose item arrived damaged; a warehouse lead inspects it and says how much to refund",
  input: DamageClaimDto,
  output: DeskActionDto,
  channel: DamageAssessmentChannel,
  deps: [CardPayments, ExecutionContext],
})
export class DamageRefundTool implements ToolHandler<DamageClaimDto, DeskActionDto, DamageAssessmentDto> {
  constructor(
    private readonly payments: CardPayments,
    private readonly context: ExecutionContext,
  ) {}

  run({ orderId, amountCents }: DamageClaimDto, assessment: DamageAssessmentDto): Promise<DeskActionDto> {
    if (assessment.refundCents > amountCents) {
      // The model reads this as a tool error and tells the customer; nothing is refunded.
      throw new Error(
        `the warehouse lead settled on ${money(assessment.refundCents)}, more than the ${money(amountCents)} paid for ${orderId}`,
      );
    }
    let refunded = `no refund for ${orderId} after inspection`;
    if (assessment.refundCents > 0) {
      const refundId = this.payments.refund(this.context.tenant.tenantId, orderId, assessment.refundCents);
      refunded = `refunded ${money(assessment.refundCents)} of ${money(amountCents)} (${refundId})`;
    }
    const parts = [refunded, assessment.restock === true ? "item back in stock" : undefined, assessment.note];
    return Promise.resolve({ status: parts.filter((part) => part !== undefined).join("; ") });
  }
}
