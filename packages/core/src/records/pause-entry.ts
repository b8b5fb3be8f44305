import type { PauseAnswerer, PauseKind, PauseResolution } from "../pauses/pause-status.js";
import type { StepRecord } from "./step.js";

/** One resolved pause in the audit trail (`record.pauses`). */
export interface PauseEntry {
  /** Undefined for a Channel pause: only its channel has the id. */
  readonly pauseId: string | undefined;
  /** The execution it waited in. */
  readonly executionId: string;
  /** The waiting step. */
  readonly step: StepRecord;
  /** The channel asked. */
  readonly role: string;
  /** `approval` (it holds a decision) or `question` (it holds an answer). */
  readonly kind: PauseKind;
  readonly answeredBy: PauseAnswerer;
  /** Who answered through `app.resume`; undefined when decided at once, withdrawn or cancelled. */
  readonly responder: string | undefined;
  readonly resolution: PauseResolution;
  /** ISO 8601 on the application's Clock. */
  readonly askedAt: string;
  readonly resolvedAt: string;
  /**
   * An approval's decision, sensitive fields masked (an expired pause's is its expiry outcome); undefined
   * for a question, or when withdrawn, cancelled or escalated.
   */
  readonly decision: unknown;
  /** A question's answer, sensitive fields masked; undefined for an approval, or when withdrawn or cancelled. */
  readonly answer: unknown;
  /**
   * For a withdrawn pause: the launch whose decision made it obsolete (a FailFast failure, a deadline,
   * a quorum), named by the execution it belongs to and its step's node id.
   */
  readonly withdrawnBy?: { readonly executionId: string; readonly launchId: string } | undefined;
  /** For an escalated pause: the role its question went to instead. */
  readonly escalatedTo?: string | undefined;
}
