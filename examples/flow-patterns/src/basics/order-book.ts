import { Injectable } from "@agboss/core";
import type { OrderDto } from "./order-dto.js";

/**
 * The shop's orders, in memory. A real application would read its database here; the container
 * creates one instance and hands it to every tool that lists it in `deps`.
 */
@Injectable()
export class OrderBook {
  readonly #orders = new Map<string, OrderDto>([
    [
      "ord_1042",
      { orderId: "ord_1042", amountCents: 12_990, currency: "EUR", customerEmail: "dana@example.com" },
    ],
    [
      "ord_2077",
      { orderId: "ord_2077", amountCents: 4_500, currency: "EUR", customerEmail: "lee@example.com" },
    ],
  ]);
  readonly #refunded = new Set<string>();

  find(orderId: string): OrderDto | undefined {
    return this.#orders.get(orderId);
  }

  /** Marks the order refunded; true the first time, false when it already was. */
  markRefunded(orderId: string): boolean {
    if (this.#refunded.has(orderId)) return false;
    this.#refunded.add(orderId);
    return true;
  }
}
