import { Dto } from "@agboss/core";
import { z } from "zod";

/** What the agent knows about a damaged order: which one, and what the customer paid. */
export class DamageClaimDto extends Dto({
  orderId: z.string().min(1),
  paidCents: z.number().int().positive(),
}) {}
