import type { ToolCallApprovalAskDto } from "../channels/approval-dtos.js";
import type { PauseAnswerer, PauseKind } from "./pause-status.js";

/** A waiting pause, as `result.pending` and `onExecutionPause` list it. */
export interface PendingPause {
  /** What `app.resume` takes: only for a ThreadOwner pause; a Channel pause's id stays with its channel. */
  readonly pauseId: string | undefined;
  readonly answeredBy: PauseAnswerer;
  /** `approval` (answer with a decision) or `question` (answer with the role's answer DTO). */
  readonly kind: PauseKind;
  /** The agent whose tool call waits. */
  readonly agent: string;
  /** The channel asked: a role's name or a concrete channel's. */
  readonly channel: string;
  /** The item of a per-item launch it waits in. */
  readonly itemIndex: number | undefined;
  /** The child execution it waits in; undefined in the root. */
  readonly childExecutionId: string | undefined;
  /** The question, sensitive fields masked. */
  readonly ask: ToolCallApprovalAskDto;
}
