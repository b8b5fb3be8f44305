/** Every stable error code AGBoss uses, by area. */
export const ErrorCode = {
  DtoInvalid: "dto.invalid",
  AssemblyInvalid: "assembly.invalid",
  MissingProvider: "container.missing-provider",
  AmbiguousProvider: "container.ambiguous-provider",
  NoExecutionContext: "context.none",
  AgentFailed: "agent.failed",
  AgentLoopLimit: "agent.loop-limit",
  StepFailed: "step.failed",
  ToolFailed: "tool.failed",
  ToolTimeout: "tool.timeout",
  ModelUnserved: "model.unserved",
  ModelFailed: "model.failed",
  WorkflowUnknown: "workflow.unknown",
  ThreadBusy: "thread.busy",
  ThreadOwner: "thread.owner",
  ExecutionCancelled: "execution.cancelled",
  LeaseLost: "lease.lost",
  AppClosed: "app.closed",
  StoreUnavailable: "store.unavailable",
  PauseUnknown: "pause.unknown",
  NotPaused: "run.not-paused",
  PauseWrongAnswerer: "pause.wrong-answerer",
  PauseNoReplyInterpreter: "pause.no-reply-interpreter",
  PauseUninterpretableReply: "pause.uninterpretable-reply",
  BudgetExceeded: "budget.exceeded",
  PiiRefused: "pii.refused",
  PiiUnknownToken: "pii.unknown-token",
} as const;

/** One of the codes in {@link ErrorCode}. */
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];
