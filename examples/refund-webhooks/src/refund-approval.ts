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
  type OutputOf,
  PauseAnswerer,
  PauseKind,
  PauseResolution,
  parseDto,
  ReplyInterpretation,
  ReplyInterpreter,
  type ReplyInterpreterHandler,
  Tool,
  type ToolHandler,
} from "@agboss/core";
import { DeskActionDto, RefundCardDto } from "./dtos.js";
import { Outbox } from "./outbox.js";
import { CardPayments } from "./payments.js";

/** What the refund question tells a manager about answering in words. */
export const REFUND_REPLY_HINT = 'Reply "approve" or "lgtm" to refund, or "reject: <why>" to refuse.';

const APPROVING_WORDS = new Set(["approve", "approved", "lgtm", "lgtm!"]);
const REJECT_PREFIX = /^(reject|rejected|no)\s*:\s*/i;

/**
 * Reads a finance manager's short reply to a refund, with plain code: "approve" or "lgtm" approve,
 * "reject: <why>" refuses with that reason. Anything else is sent back for a clearer answer.
 */
@ReplyInterpreter({
  name: "refund-reply-interpreter",
  description: "Reads approve, lgtm or reject: <why> from a finance manager",
  decidedBy: DecidedBy.Code,
})
export class RefundReplyInterpreter implements ReplyInterpreterHandler<RefundReplyInterpreter> {
  interpret({
    reply,
  }: InputOf<RefundReplyInterpreter>): ReplyInterpretation<OutputOf<RefundReplyInterpreter>> {
    const words = reply.trim().replace(/\s+/g, " ");
    if (APPROVING_WORDS.has(words.toLowerCase())) return ReplyInterpretation.understood({ approved: true });
    const rejection = REJECT_PREFIX.exec(words);
    if (rejection !== null) {
      const reason = words.slice(rejection[0].length).trim();
      if (reason === "") {
        return ReplyInterpretation.notUnderstood({
          reason: 'Say why after "reject:", e.g. "reject: already refunded".',
        });
      }
      return ReplyInterpretation.understood({ approved: false, reason });
    }
    return ReplyInterpretation.notUnderstood({
      reason: `I could not read "${words}" as a decision. ${REFUND_REPLY_HINT}`,
    });
  }
}

/** A finance manager approves money going back to a card, by button or in words. */
@ChannelRole({
  name: "refund-approval-channel",
  description: "A finance manager approves card refunds",
  approves: RefundCardDto,
  answeredBy: PauseAnswerer.Channel,
  replyInterpreter: RefundReplyInterpreter,
})
export abstract class RefundApprovalChannel extends ChannelOf<RefundApprovalChannel> {}

/** Posts refund questions to the outbox (where a Slack post would go) and takes stale ones back. */
@Channel({
  name: "outbox-refund-approval-channel",
  description: "Posts refund questions to the in-process outbox",
  deps: [Outbox, ExecutionContext],
})
export class OutboxRefundApprovalChannel extends RefundApprovalChannel {
  constructor(
    private readonly outbox: Outbox,
    private readonly context: ExecutionContext,
  ) {
    super();
  }

  send(ask: ChannelAsk<RefundApprovalChannel>): Promise<ChannelOutcome<RefundApprovalChannel>> {
    const { orderId, amountCents } = parseDto(RefundCardDto, ask.value.arguments, "the refund question");
    this.outbox.post({
      pauseId: ask.pauseId,
      channel: "refund-approval-channel",
      kind: PauseKind.Approval,
      tenantId: this.context.tenant.tenantId,
      threadId: this.context.threadId,
      question: `Refund ${(amountCents / 100).toFixed(2)} to the card of order ${orderId} (asked by ${this.context.ownerId})?`,
      arguments: { ...ask.value.arguments },
      howToAnswer: REFUND_REPLY_HINT,
    });
    return Promise.resolve(ChannelOutcome.awaitReply());
  }

  override withdraw(withdrawal: ChannelWithdrawal<RefundApprovalChannel>): Promise<void> {
    this.outbox.settle(withdrawal.pauseId, "withdrawn", withdrawalNote(withdrawal.resolution));
    return Promise.resolve();
  }
}

/** Why a question was taken back, in a manager's words. */
export function withdrawalNote(resolution: ChannelWithdrawal["resolution"]): string {
  return resolution === PauseResolution.Cancelled
    ? "The request was cancelled; no answer needed."
    : "No longer needed.";
}

/** Sends money back to the customer's card (through the stand-in processor), once a manager agreed. */
@Tool({
  name: "refund-card-tool",
  description: "Refunds an amount to the card the order was paid with",
  input: RefundCardDto,
  output: DeskActionDto,
  channel: RefundApprovalChannel,
  deps: [CardPayments, ExecutionContext],
})
export class RefundCardTool implements ToolHandler<RefundCardDto, DeskActionDto> {
  constructor(
    private readonly payments: CardPayments,
    private readonly context: ExecutionContext,
  ) {}

  run({ orderId, amountCents }: RefundCardDto): Promise<DeskActionDto> {
    const refundId = this.payments.refund(this.context.tenant.tenantId, orderId, amountCents);
    return Promise.resolve({ status: `refunded ${(amountCents / 100).toFixed(2)} (${refundId})` });
  }
}
