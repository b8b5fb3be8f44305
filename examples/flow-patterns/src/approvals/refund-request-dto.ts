import { Dto, sensitive } from "@agboss/core";
import { z } from "zod";

/** A card refund: the card's number is masked wherever the call is shown. */
export class RefundRequestDto extends Dto({
  orderId: z.string().min(1),
  amountCents: z.number().int().positive(),
  cardNumber: sensitive(z.string().min(12)),
}) {}
