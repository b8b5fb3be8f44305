import { Dto } from "@agboss/core";
import { z } from "zod";

/** What the shop's backend posts to start a refund: one order, one amount, the customer's words. */
export class RefundRequestWebhookDto extends Dto({
  orderId: z.string().min(1),
  amountCents: z.number().int().positive(),
  tenantId: z.string().min(1),
  userId: z.string().min(1),
  text: z.string().min(1),
}) {}

/** What the approval surface posts: a button (`approved`) or a manager's own words (`reply`). */
export class ApprovalWebhookDto extends Dto({
  pauseId: z.string().min(1),
  tenantId: z.string().min(1),
  managerId: z.string().min(1),
  approved: z.boolean().optional(),
  reason: z.string().min(1).optional(),
  reply: z.string().optional(),
}) {}

/**
 * What the answering surface posts for a question (rather than an approval): a filled-in form
 * (`answer`, checked against the question role's answer DTO by `app.resume`) or a person's own words
 * (`reply`).
 */
export class AnswerWebhookDto extends Dto({
  pauseId: z.string().min(1),
  tenantId: z.string().min(1),
  staffId: z.string().min(1),
  answer: z.record(z.string(), z.unknown()).optional(),
  reply: z.string().optional(),
}) {}

/** What the shop posts when the customer withdraws the request. */
export class CancelWebhookDto extends Dto({
  orderId: z.string().min(1),
  tenantId: z.string().min(1),
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
