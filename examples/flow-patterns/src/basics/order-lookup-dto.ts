import { Dto } from "@agboss/core";
import { z } from "zod";

/** Which order to look up. */
export class OrderLookupDto extends Dto({
  orderId: z.string().regex(/^ord_\w+$/, "an order id looks like ord_1042"),
}) {}
