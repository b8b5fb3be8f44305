import { Dto, sensitive } from "@agboss/core";
import { z } from "zod";

/** What the model must give to refund an order; the receipt goes to `customerEmail`. */
export class RefundCardInputDto extends Dto({
  orderId: z.string().min(1),
  amountCents: z.number().int().positive(),
  customerEmail: sensitive(z.email()),
}) {}
