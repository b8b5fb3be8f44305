import { z } from "zod";
import { Dto } from "../dto/dto.js";

/** The longest `reason` a decision may give, in characters. */
export const MAX_REASON_CHARS = 4_000;

/** The question a channel asks about a tool call: which tool, with which arguments. */
export class ToolCallApprovalAskDto extends Dto({
  /** The tool's name. */
  tool: z.string(),
  /** The agent that called it. */
  agent: z.string(),
  /** The model's id for the call. */
  callId: z.string(),
  /** The call's arguments, valid for the tool's input (sensitive fields masked where shown). */
  arguments: z.record(z.string(), z.unknown()),
}) {}

/**
 * A decision about a tool call. `overrideArguments` replaces the model's arguments; it is allowed
 * only with `approved: true` and must be a valid input of the tool.
 */
export class ToolCallApprovalDecisionDto extends Dto(
  z
    .object({
      approved: z.boolean(),
      reason: z.string().min(1).max(MAX_REASON_CHARS).optional(),
      overrideArguments: z.record(z.string(), z.unknown()).optional(),
    })
    .strict()
    .refine((d) => d.overrideArguments === undefined || d.approved, {
      message: "overrideArguments is allowed only with approved: true",
      path: ["overrideArguments"],
    }) as unknown as z.ZodObject<{
    approved: z.ZodBoolean;
    reason: z.ZodOptional<z.ZodString>;
    overrideArguments: z.ZodOptional<z.ZodRecord<z.ZodString, z.ZodUnknown>>;
  }>,
) {}
