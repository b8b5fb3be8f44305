import { Dto } from "@agboss/core";
import { z } from "zod";

/** What a refund produced. */
export class RefundCardOutputDto extends Dto({
  refundId: z.string(),
  status: z.enum(["refunded", "already-refunded"]),
}) {}
