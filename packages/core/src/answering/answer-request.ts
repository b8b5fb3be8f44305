import type { ToolCallApprovalDecisionDto } from "../channels/approval-dtos.js";
import type { RoleAnswer } from "../channels/channel-outcome.js";

/** Answers an approval role's pause with a decision. */
export interface DecisionResumeRequest {
  readonly pauseId: string;
  readonly decision: ToolCallApprovalDecisionDto;
  readonly answer?: never;
  readonly reply?: never;
}

/**
 * Answers a question role's pause with a value of the role's `answer` DTO. `TRole` types it when the
 * role declares its DTOs (`ChannelOf<Self, Ask, Answer>`, or generated types); else any object.
 */
export interface AnswerResumeRequest<TRole = unknown> {
  readonly pauseId: string;
  /** A value of the role's `answer` DTO (a DTO instance or a plain object). */
  readonly answer: RoleAnswer<TRole>;
  readonly decision?: never;
  readonly reply?: never;
}

/** Answers a pause with a person's free text, read by the role's reply interpreter. */
export interface ReplyResumeRequest {
  readonly pauseId: string;
  readonly reply: string;
  readonly decision?: never;
  readonly answer?: never;
}

/**
 * Exactly one of a decision (an approval role's pause), an answer (a question role's) or a reply
 * (either, when the role has a reply interpreter). `app.resume<Role>(…)` names the pause's role, so
 * that the answer is checked against the role's declared answer DTO.
 */
export type ResumeRequest<TRole = unknown> =
  | DecisionResumeRequest
  | AnswerResumeRequest<TRole>
  | ReplyResumeRequest;

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
  /**
   * Stops this call's work and detaches the caller: an answer already recorded stays recorded, the tree
   * stops at its next step, and the call rejects with `ExecutionAbortedError`. Nothing is ended: the tree
   * stays running and durable, the recovery sweep of any instance carries it on at its next round, and
   * `app.cancel` is how to stop it for good.
   */
  readonly signal?: AbortSignal;
};

/** Options of `app.answer`: who answers, and the tenant. */
export type AnswerOptions = ResumeCredential & {
  /** Default `default`. */
  readonly tenantId?: string;
  /**
   * Stops the move this process makes in the background after the answer is recorded (as for
   * `app.resume`); aborted before the call, nothing is recorded.
   */
  readonly signal?: AbortSignal;
};

/** What `app.answer` returns: the answer is recorded; the tree moves on in the background. */
export interface AnswerReceipt {
  readonly pauseId: string;
  readonly threadId: string;
  /** The execution the pause waited in (the root's, or a child's). */
  readonly executionId: string;
  /** When the answer was recorded (ISO 8601 on the application's Clock). */
  readonly resolvedAt: string;
}
