import { Dto } from "@agboss/core";
import { z } from "zod";

/** What the refund tool takes, and what its approval role approves. */
export class RefundCardInputDto extends Dto({
  orderId: z.string().min(1),
  amountCents: z.number().int().positive(),
}) {}

/** What the refund tool gives. */
export class RefundCardOutputDto extends Dto({ refundId: z.string() }) {}

/** What the lookup tool takes: no approval. */
export class OrderLookupInputDto extends Dto({ orderId: z.string().min(1) }) {}

/** What the lookup tool gives. */
export class OrderLookupOutputDto extends Dto({ status: z.enum(["paid", "refunded"]) }) {}
