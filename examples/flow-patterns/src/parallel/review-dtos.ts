import { Dto } from "@agboss/core";
import { z } from "zod";

/** Signing a supplier contract: legal's call. */
export class SignContractDto extends Dto({
  supplier: z.string().min(1),
  contractId: z.string().min(1),
}) {}

/** Reserving budget for it: finance's call. */
export class ReserveBudgetDto extends Dto({
  costCenter: z.string().min(1),
  amountCents: z.number().int().positive(),
}) {}

/** What a review tool did. */
export class ReviewDoneDto extends Dto({ status: z.string() }) {}
