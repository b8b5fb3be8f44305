import type { ToolCallApprovalDecisionDto } from "../channels/approval-dtos.js";

/** Answers a pause with a decision. */
export interface DecisionResumeRequest {
  readonly pauseId: string;
  readonly decision: ToolCallApprovalDecisionDto;
  readonly reply?: never;
}

/** Answers a pause with a person's free text, read by the role's reply interpreter. */
export interface ReplyResumeRequest {
  readonly pauseId: string;
  readonly reply: string;
  readonly decision?: never;
}

/** Exactly one of a decision or a reply. */
export type ResumeRequest = DecisionResumeRequest | ReplyResumeRequest;

/** Who answers: the thread's owner (`ownerId`) or someone the channel authenticated (`answeredBy`). */
export type ResumeCredential =
  | { readonly ownerId: string; readonly answeredBy?: never }
  | { readonly answeredBy: string; readonly ownerId?: never };

/** Options of `app.resume`. */
export type ResumeOptions = ResumeCredential & {
  /** Default `default`. */
  readonly tenantId?: string;
  /** Return the execution record as `result.record`. */
  readonly record?: boolean;
};
