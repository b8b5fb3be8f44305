import { Dto, sensitive } from "@agboss/core";
import { z } from "zod";

/** What the desk decides after looking at the photos. The note may name the customer: kept masked. */
export class DamageAssessmentDto extends Dto({
  refundCents: z.number().int().nonnegative().describe("in cents"),
  restock: z.boolean().describe("can it be sold again?"),
  note: sensitive(z.string().max(200)).optional(),
}) {}
