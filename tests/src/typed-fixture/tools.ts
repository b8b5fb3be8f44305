import { Tool, type ToolHandler } from "@agboss/core";
import {
  OrderLookupInputDto,
  OrderLookupOutputDto,
  RefundCardInputDto,
  RefundCardOutputDto,
} from "./dtos.js";
import { RefundApprovalChannel } from "./refund-approval.channel.js";

/** Refunds a card payment once a finance manager approves. */
@Tool({
  name: "refund-card-tool",
  description: "Refunds a card payment",
  input: RefundCardInputDto,
  output: RefundCardOutputDto,
  channel: RefundApprovalChannel,
})
export class RefundCardTool implements ToolHandler<RefundCardInputDto, RefundCardOutputDto> {
  run(input: RefundCardInputDto): RefundCardOutputDto {
    return { refundId: `re_${input.orderId}` };
  }
}

/** Looks an order up; its class does not say its types, the generated declarations do. */
@Tool({
  name: "order-lookup-tool",
  description: "Looks an order up",
  input: OrderLookupInputDto,
  output: OrderLookupOutputDto,
})
export class OrderLookupTool {
  run(input: { orderId: string }): Promise<object> {
    return Promise.resolve({ status: input.orderId.startsWith("r") ? "refunded" : "paid" });
  }
}
