import { Dto, sensitive } from "@agboss/core";
import { z } from "zod";

/** An order as the order book knows it. The customer's email is masked in records and logs. */
export class OrderDto extends Dto({
  orderId: z.string(),
  amountCents: z.number().int().positive(),
  currency: z.string().length(3),
  customerEmail: sensitive(z.email()),
}) {}
