import { Dto } from "@agboss/core";
import { z } from "zod";

export const PICKUP_DAYS = ["monday", "tuesday", "wednesday", "thursday", "friday"] as const;
export const PICKUP_WINDOWS = ["morning", "afternoon"] as const;

/**
 * When the courier comes, as the desk answers it. Each field has its own list; the rule across them
 * (no Friday afternoons) is the DTO's, so the terminal shows it when the whole answer is sent.
 */
export class PickupSlotDto extends Dto(
  z
    .object({
      day: z.enum(PICKUP_DAYS),
      window: z.enum(PICKUP_WINDOWS),
      instructions: z.string().max(60).optional().describe("for the courier"),
    })
    .refine((slot) => !(slot.day === "friday" && slot.window === "afternoon"), {
      message: "the courier does not collect on Friday afternoons; pick another window or day",
      path: ["window"],
    }),
) {}
