import {
  Channel,
  type ChannelAsk,
  ChannelOf,
  ChannelOutcome,
  ChannelRole,
  PauseAnswerer,
} from "@agboss/core";
import { RefundCardInputDto } from "./dtos.js";
import { RefundReplyInterpreter } from "./refund-reply.interpreter.js";

/** A finance manager approves refunds, by button or in words. */
@ChannelRole({
  name: "refund-approval-channel",
  description: "A finance manager approves refunds",
  approves: RefundCardInputDto,
  answeredBy: PauseAnswerer.Channel,
  replyInterpreter: RefundReplyInterpreter,
})
export abstract class RefundApprovalChannel extends ChannelOf<RefundApprovalChannel> {}

/** Posts the question to the finance room and waits for a reply. */
@Channel({ name: "finance-room-refund-approval-channel", description: "Posts to the finance room" })
export class FinanceRoomRefundApprovalChannel extends RefundApprovalChannel {
  readonly posted: string[] = [];

  send(ask: ChannelAsk<RefundApprovalChannel>): Promise<ChannelOutcome<RefundApprovalChannel>> {
    this.posted.push(`refund ${String(ask.value.arguments.orderId)}?`);
    return Promise.resolve(ChannelOutcome.awaitReply());
  }
}
