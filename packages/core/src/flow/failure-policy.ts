/** What a parallel launch does when a branch fails. */
export const FailurePolicy = {
  /** The first failure cancels the launch: paused siblings' questions are withdrawn and the join gets the error. */
  FailFast: "fail-fast",
  /** Every branch runs to its end; the join gets each branch's output or error. */
  CollectAll: "collect-all",
} as const;
export type FailurePolicy = (typeof FailurePolicy)[keyof typeof FailurePolicy];
