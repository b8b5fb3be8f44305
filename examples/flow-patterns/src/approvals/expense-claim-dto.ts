import { Dto } from "@agboss/core";
import { z } from "zod";

/** An expense to book. */
export class ExpenseClaimDto extends Dto({
  purpose: z.string().min(1),
  amountCents: z.number().int().positive(),
}) {}
