import { AgbossError } from "./agboss-error.js";
import { ErrorCode } from "./error-codes.js";

/** A step of a workflow failed; `cause` holds what it threw. */
export class StepFailedError extends AgbossError {
  static override readonly kind: string = "StepFailedError";
  /** The graph node of the step. */
  readonly nodeId: string;

  constructor(nodeId: string, message: string, options: { cause?: unknown; code?: string } = {}) {
    super(options.code ?? ErrorCode.StepFailed, message, { cause: options.cause });
    this.nodeId = nodeId;
  }
}

/** An agent's step failed: its model, a channel or its loop broke. `cause` holds the underlying error. */
export class AgentFailedError extends StepFailedError {
  static override readonly kind: string = "AgentFailedError";
  /** The agent's name. */
  readonly agent: string;

  constructor(
    agent: string,
    nodeId: string,
    reason: string,
    options: { cause?: unknown; code?: string } = {},
  ) {
    super(nodeId, `Agent "${agent}" failed: ${reason}`, {
      cause: options.cause,
      code: options.code ?? ErrorCode.AgentFailed,
    });
    this.agent = agent;
  }
}
