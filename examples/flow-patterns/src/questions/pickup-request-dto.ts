import { Dto } from "@agboss/core";
import { z } from "zod";

/** What the agent knows when it books a courier: the order going back. */
export class PickupRequestDto extends Dto({ orderId: z.string().min(1) }) {}
