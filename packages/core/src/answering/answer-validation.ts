import type { AssembledTool } from "../assembly/assembled-application.js";
import { ToolCallApprovalDecisionDto } from "../channels/approval-dtos.js";
import { type DtoClass, parseDto } from "../dto/dto.js";
import { DtoValidationError } from "../errors/dto-validation-error.js";

/** Validates a decision for a tool: the decision DTO, then `overrideArguments` against the tool's input. @internal */
export function validateDecision(tool: AssembledTool, value: unknown): ToolCallApprovalDecisionDto {
  const decision = parseDto(ToolCallApprovalDecisionDto, value, `the decision for ${tool.name}`);
  if (decision.overrideArguments !== undefined) {
    // An approver's typo in an optional field would otherwise vanish: unknown fields are refused.
    refuseUnknownFields(tool.options.input, decision.overrideArguments, `overrideArguments of ${tool.name}`);
    const overrides = parseDto(
      tool.options.input,
      decision.overrideArguments,
      `overrideArguments of ${tool.name}`,
    );
    return { ...decision, overrideArguments: overrides as Record<string, unknown> };
  }
  return decision;
}

/**
 * Validates what answers a pause of `tool`'s channel, as the pause will hold it: a question role's
 * answer against its `answer` DTO, an approval role's decision like {@link validateDecision}.
 * @internal
 */
export function validatePauseAnswer(tool: AssembledTool, value: unknown): PauseAnswerValue {
  const answerDto = tool.channel?.answer;
  if (answerDto === undefined) return { decision: validateDecision(tool, value) };
  // Like a decision, an answer with a field its DTO does not know is refused, not quietly trimmed.
  refuseUnknownFields(answerDto, value, `the answer for ${tool.name}`);
  return { answer: parseDto(answerDto, value, `the answer for ${tool.name}`) };
}

/** A validated decision (approval role) or answer (question role), as a pause's answer holds it. @internal */
export type PauseAnswerValue =
  | { readonly decision: ToolCallApprovalDecisionDto }
  | { readonly answer: unknown };

/** Refuses a record with a field its DTO does not know (zod would strip it silently). */
function refuseUnknownFields(dto: DtoClass, value: unknown, context: string): void {
  const shape = (dto.schema as { shape?: Record<string, unknown> }).shape;
  if (shape === undefined || typeof value !== "object" || value === null || Array.isArray(value)) return;
  const unknown = Object.keys(value).filter((key) => !(key in shape));
  if (unknown.length === 0) return;
  throw new DtoValidationError(
    dto.name,
    unknown.map((key) => ({ path: key, message: `${dto.name} has no field "${key}"` })),
    { context },
  );
}
