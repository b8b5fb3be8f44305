import { Injectable } from "@agboss/core";

/** One refund the card processor was asked to make. */
export interface CardRefund {
  readonly refundId: string;
  readonly tenantId: string;
  readonly orderId: string;
  readonly amountCents: number;
  readonly at: string;
}

/**
 * The stand-in for a card processor's API: the refund tools call it, and it records each call in this
 * process's memory (GET /refunds lists them), so a test can count how often money went back, and on
 * which instance.
 */
@Injectable()
export class CardPayments {
  readonly #refunds: CardRefund[] = [];

  /** Sends `amountCents` back to the card of the order; answers the processor's refund id. */
  refund(tenantId: string, orderId: string, amountCents: number): string {
    const refundId = `rf_${tenantId}_${orderId}`;
    this.#refunds.push({ refundId, tenantId, orderId, amountCents, at: new Date().toISOString() });
    return refundId;
  }

  /** Every refund made in this process, oldest first. */
  list(): readonly CardRefund[] {
    return this.#refunds.map((r) => ({ ...r }));
  }
}
