/** What a quorum join made of one branch. */
export const BranchVerdict = {
  /** Finished before the quorum was decided, and counted (in a group quorum: joined a group). */
  Counted: "counted",
  /** Finished before the quorum was decided, and did not count (joined no group). */
  NotCounted: "not-counted",
  /** Not needed: finished after the quorum was decided, or withdrawn because it was decided. */
  Surplus: "surplus",
  /** Ended with an error. */
  Failed: "failed",
} as const;
export type BranchVerdict = (typeof BranchVerdict)[keyof typeof BranchVerdict];

/** Whether a quorum was met. */
export const QuorumOutcome = {
  /** `max` branches counted (a group reached `max`), or at least `min` counted when it was decided otherwise. */
  Won: "won",
  /** It was decided without being met. */
  Lost: "lost",
} as const;
export type QuorumOutcome = (typeof QuorumOutcome)[keyof typeof QuorumOutcome];

/** What decided a quorum. */
export const QuorumDecidedBy = {
  /** `max` branches counted, or a group reached `max`. */
  Max: "max",
  /** Too many branches ended without counting for `max` to be reached. */
  Unreachable: "unreachable",
  /** The launch's or the quorum's deadline passed first. */
  Deadline: "deadline",
} as const;
export type QuorumDecidedBy = (typeof QuorumDecidedBy)[keyof typeof QuorumDecidedBy];

/** One branch in a quorum join's output. */
export interface QuorumBranchResult {
  readonly index: number;
  /** What the branch ran: its agent's name. */
  readonly branch: string;
  readonly itemIndex?: number | undefined;
  readonly verdict: BranchVerdict;
  /** In a group quorum, the group a counted branch joined. */
  readonly group?: string | undefined;
  /** What the branch produced, when it finished. */
  readonly output?: unknown;
  /** Why it failed, for `BranchVerdict.Failed`. */
  readonly error?:
    | { readonly name: string; readonly code: string | undefined; readonly message: string }
    | undefined;
  /** True when it was withdrawn before it finished. */
  readonly withdrawn?: boolean | undefined;
}

/**
 * What a quorum join hands to the next step.
 *
 * @example
 * { outcome: "won", decidedBy: "max", max: 2, counted: 2, results: [{ index: 0, branch: "legal-agent", verdict: "counted", output: { text: "approve" } }, …] }
 */
export interface QuorumJoinOutput {
  readonly outcome: QuorumOutcome;
  readonly decidedBy: QuorumDecidedBy;
  /** In a group quorum that was won, the winning group. */
  readonly group?: string | undefined;
  readonly max: number;
  /** How many branches counted (in a group quorum: joined any group) before it was decided. */
  readonly counted: number;
  /** In a group quorum, how many branches joined each group before it was decided. */
  readonly tally?: Readonly<Record<string, number>> | undefined;
  /** Every branch, in launch order. */
  readonly results: readonly QuorumBranchResult[];
}
