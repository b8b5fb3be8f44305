import { ExecutionContext, seconds, Tool, type ToolHandler } from "@agboss/core";
import { OrderBook } from "./order-book.js";
import { RefundCardInputDto } from "./refund-card-input-dto.js";
import { RefundCardOutputDto } from "./refund-card-output-dto.js";

@Tool({
  name: "refund-card-tool",
  description: "Refunds an order's card payment and emails the customer a receipt",
  input: RefundCardInputDto,
  output: RefundCardOutputDto,
  timeout: seconds(10),
  deps: [OrderBook, ExecutionContext],
})
export class RefundCardTool implements ToolHandler<RefundCardInputDto, RefundCardOutputDto> {
  constructor(
    private readonly orders: OrderBook,
    private readonly executionContext: ExecutionContext,
  ) {}

  run({ orderId, amountCents }: RefundCardInputDto): RefundCardOutputDto {
    const order = this.orders.find(orderId);
    if (order === undefined) throw new Error(`no order ${orderId}.`);
    if (amountCents > order.amountCents) {
      throw new Error(`${orderId} was paid ${order.amountCents} cents; refund at most that.`);
    }
    // Aborts when the call times out or the thread is cancelled: stop before moving money.
    this.executionContext.signal.throwIfAborted();
    const first = this.orders.markRefunded(orderId);
    const tenant = this.executionContext.tenant.tenantId;
    return { refundId: `rf_${tenant}_${orderId}`, status: first ? "refunded" : "already-refunded" };
  }
}
