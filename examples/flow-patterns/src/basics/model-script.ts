import { type ChatRequest, callTool, InjectionToken, replyWith, type ScriptedTurn } from "@agboss/core";
import { LookupOrderTool } from "./lookup-order-tool.js";
import type { OrderDto } from "./order-dto.js";
import type { RefundCardOutputDto } from "./refund-card-output-dto.js";
import { RefundCardTool } from "./refund-card-tool.js";

/** The turns the scripted model plays, in order. Register another value to play another script. */
export const MODEL_SCRIPT = new InjectionToken<readonly ScriptedTurn[]>("model-script");

/** The last result a tool gave in the conversation the model is shown, parsed. */
function lastResultOf<T>(request: ChatRequest, tool: string): T | undefined {
  const message = request.messages.findLast((m) => m.role === "tool" && m.name === tool);
  return message === undefined || message.content.startsWith("Tool error:")
    ? undefined
    : (JSON.parse(message.content) as T);
}

function euros(cents: number, currency: string): string {
  return `${(cents / 100).toFixed(2)} ${currency}`;
}

/** A refund request: look the order up, refund what was paid, answer. */
export const refundScript: readonly ScriptedTurn[] = [
  callTool(LookupOrderTool, { orderId: "ord_1042" }),
  (request) => {
    const order = lastResultOf<OrderDto>(request, "lookup-order-tool");
    if (order === undefined) return replyWith("I could not find that order; please check its id.");
    const { orderId, amountCents, customerEmail } = order;
    return callTool(RefundCardTool, { orderId, amountCents, customerEmail });
  },
  (request) => {
    const order = lastResultOf<OrderDto>(request, "lookup-order-tool");
    const refund = lastResultOf<RefundCardOutputDto>(request, "refund-card-tool");
    if (order === undefined || refund === undefined) return replyWith("The refund did not go through.");
    return replyWith(
      `I refunded ${euros(order.amountCents, order.currency)} for ${order.orderId} (refund ${refund.refundId}); ` +
        "the receipt is on its way to your email.",
    );
  },
];

/**
 * A follow-up on the same thread, played by a model that knows nothing else: its answer can only come
 * from the conversation the store kept.
 */
export const followUpScript: readonly ScriptedTurn[] = [
  (request) => {
    const refund = lastResultOf<RefundCardOutputDto>(request, "refund-card-tool");
    const earlier = request.messages.length - 1;
    if (refund === undefined) return replyWith(`I see ${earlier} earlier messages but no refund in them.`);
    return replyWith(
      `Yes: refund ${refund.refundId} is ${refund.status} (I read it in the ${earlier} earlier messages of this conversation).`,
    );
  },
];
