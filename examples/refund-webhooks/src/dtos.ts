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

/** What either tool reports. */
export class DeskActionDto extends Dto({ status: z.string() }) {}
