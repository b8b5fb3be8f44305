/** Where an execution stands. */
export const ExecutionStatus = {
  Running: "running",
  /** Resting: at least one pause waits and nothing else can move. */
  Paused: "paused",
  Completed: "completed",
  Failed: "failed",
  Cancelled: "cancelled",
} as const;
export type ExecutionStatus = (typeof ExecutionStatus)[keyof typeof ExecutionStatus];
