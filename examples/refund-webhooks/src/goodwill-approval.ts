import {
  Channel,
  type ChannelAsk,
  ChannelOf,
  ChannelOutcome,
  ChannelRole,
  type ChannelWithdrawal,
  DecidedBy,
  ExecutionContext,
  PauseAnswerer,
  PauseKind,
  parseDto,
  ReplyInterpreter,
  Tool,
  type ToolHandler,
} from "@agboss/core";
import { DeskActionDto, GoodwillCreditDto } from "./dtos.js";
import { REPLY_MODEL } from "./model-ids.js";
import { Outbox } from "./outbox.js";
import { withdrawalNote } from "./refund-approval.js";

/** What the goodwill question tells a manager about answering in words. */
export const GOODWILL_REPLY_HINT = "Answer in your own words; a model reads whether you agree.";

/** A model reads whatever a manager wrote about a goodwill credit and fills in the decision. */
@ReplyInterpreter({
  name: "goodwill-reply-interpreter",
  description: "Reads a manager's free-form answer to a goodwill credit",
  decidedBy: DecidedBy.Model,
  model: REPLY_MODEL,
  prompt:
    "A finance manager answered a question about granting a customer a store credit as a goodwill gesture. " +
    "Decide from their words whether they approve it. When they refuse, give their reason in a short sentence.",
})
export class GoodwillReplyInterpreter {}

/** A finance manager approves store credits, in their own words. */
@ChannelRole({
  name: "goodwill-approval-channel",
  description: "A finance manager approves goodwill store credits",
  approves: GoodwillCreditDto,
  answeredBy: PauseAnswerer.Channel,
  replyInterpreter: GoodwillReplyInterpreter,
})
export abstract class GoodwillApprovalChannel extends ChannelOf<GoodwillApprovalChannel> {}

/** Posts goodwill questions to the same outbox as refunds. */
@Channel({
  name: "outbox-goodwill-approval-channel",
  description: "Posts goodwill questions to the in-process outbox",
  deps: [Outbox, ExecutionContext],
})
export class OutboxGoodwillApprovalChannel extends GoodwillApprovalChannel {
  constructor(
    private readonly outbox: Outbox,
    private readonly context: ExecutionContext,
  ) {
    super();
  }

  send(ask: ChannelAsk<GoodwillApprovalChannel>): Promise<ChannelOutcome<GoodwillApprovalChannel>> {
    const { orderId, amountCents } = parseDto(
      GoodwillCreditDto,
      ask.value.arguments,
      "the goodwill question",
    );
    this.outbox.post({
      pauseId: ask.pauseId,
      channel: "goodwill-approval-channel",
      kind: PauseKind.Approval,
      tenantId: this.context.tenant.tenantId,
      threadId: this.context.threadId,
      question: `Grant a store credit of ${(amountCents / 100).toFixed(2)} for order ${orderId} (asked by ${this.context.ownerId})?`,
      arguments: { ...ask.value.arguments },
      howToAnswer: GOODWILL_REPLY_HINT,
    });
    return Promise.resolve(ChannelOutcome.awaitReply());
  }

  override withdraw(withdrawal: ChannelWithdrawal<GoodwillApprovalChannel>): Promise<void> {
    this.outbox.settle(withdrawal.pauseId, "withdrawn", withdrawalNote(withdrawal.resolution));
    return Promise.resolve();
  }
}

/** Grants a store credit instead of money back (here: pretends to), once a manager agreed. */
@Tool({
  name: "goodwill-credit-tool",
  description: "Grants the customer a store credit as a goodwill gesture",
  input: GoodwillCreditDto,
  output: DeskActionDto,
  channel: GoodwillApprovalChannel,
  deps: [ExecutionContext],
})
export class GoodwillCreditTool implements ToolHandler<GoodwillCreditDto, DeskActionDto> {
  constructor(private readonly context: ExecutionContext) {}

  run({ orderId, amountCents }: GoodwillCreditDto): Promise<DeskActionDto> {
    const creditId = `gc_${this.context.tenant.tenantId}_${orderId}`;
    return Promise.resolve({ status: `credited ${(amountCents / 100).toFixed(2)} (${creditId})` });
  }
}
