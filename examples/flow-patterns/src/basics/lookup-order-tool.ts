import { Tool, type ToolHandler } from "@agboss/core";
import { OrderBook } from "./order-book.js";
import { OrderDto } from "./order-dto.js";
import { OrderLookupDto } from "./order-lookup-dto.js";

@Tool({
  name: "lookup-order-tool",
  description: "Finds an order by its id: amount, currency and the customer's email",
  input: OrderLookupDto,
  output: OrderDto,
  deps: [OrderBook],
})
export class LookupOrderTool implements ToolHandler<OrderLookupDto, OrderDto> {
  constructor(private readonly orders: OrderBook) {}

  run({ orderId }: OrderLookupDto): OrderDto {
    const order = this.orders.find(orderId);
    // The message of a thrown error is what the model reads, as "Tool error: …".
    if (order === undefined) throw new Error(`no order ${orderId}; ask the customer to check the id.`);
    return order;
  }
}
