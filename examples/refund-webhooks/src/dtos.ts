import { Dto } from "@agboss/core";
import { z } from "zod";

/**
 * A customer's request to the refund desk, as the shop's backend sends it to
 * `POST /starts/refund-desk-workflow-start` (in `{ input }`): one order, one amount, the customer's
 * words. Who asks is not in it: it is the caller the request authenticates as.
 */
export class RefundRequestDto extends Dto({
  orderId: z.string().min(1),
  amountCents: z.number().int().positive(),
  text: z.string().min(1),
}) {}

/** The refund tool's input, and what its approval role decides about. */
export class RefundCardDto extends Dto({
  orderId: z.string().min(1),
  amountCents: z.number().int().positive(),
}) {}

/** The goodwill tool's input: a store credit instead of money back. */
export class GoodwillCreditDto extends Dto({
  orderId: z.string().min(1),
  amountCents: z.number().int().positive(),
}) {}

/** The damage tool's input: the order whose item arrived damaged, and what the customer paid. */
export class DamageClaimDto extends Dto({
  orderId: z.string().min(1),
  amountCents: z.number().int().positive(),
}) {}

/**
 * How a warehouse lead settles a damage claim after looking at the photos: how much goes back to the
 * card, whether the item can be sold again, and a note for the customer.
 */
export class DamageAssessmentDto extends Dto({
  refundCents: z.number().int().nonnegative(),
  restock: z.boolean().optional(),
  note: z.string().min(1).optional(),
}) {}

/** What every tool reports. */
export class DeskActionDto extends Dto({ status: z.string() }) {}
