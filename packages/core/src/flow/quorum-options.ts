import type { Duration } from "../time/duration.js";

/** The branch a quorum predicate is asked about. */
export interface QuorumBranch {
  /** The branch's position in its launch, from 0. */
  readonly index: number;
  /** What the branch ran: its agent's name. */
  readonly branch: string;
  /** The item of a per-item launch. */
  readonly itemIndex?: number | undefined;
}

/**
 * Tells from a branch that finished without error whether it counts (or, in a group quorum, belongs to
 * a group). It may be called again each time the launch is looked at, so keep it pure and quick.
 */
export type QuorumPredicate = (output: unknown, branch: QuorumBranch) => boolean;

/** Options of `.joinQuorum(…)`. */
export interface QuorumOptions {
  /** The launch is decided (won) as soon as this many branches count. A whole number of at least 1. */
  readonly max: number;
  /** Whether a finished branch counts. Default: every branch that finished without error counts. */
  readonly count?: QuorumPredicate;
  /**
   * The least number of counted branches for the outcome to be won when the launch is decided without
   * reaching `max` (its deadline passed, or `max` can no longer be reached). Default: `max`.
   */
  readonly min?: number;
  /** Elapsed time on the application's Clock from the launch, pauses included, after which it is decided. */
  readonly deadline?: Duration;
}

/** Options of `.joinQuorumGroups(…)`. */
export interface QuorumGroupsOptions {
  /**
   * The groups a finished branch may join, by name: it joins the first whose predicate holds (in the
   * order written), or none.
   */
  readonly groups: Readonly<Record<string, QuorumPredicate>>;
  /** The first group to reach this many branches wins. A whole number of at least 1. */
  readonly max: number;
  /** Elapsed time on the application's Clock from the launch, pauses included, after which it is decided. */
  readonly deadline?: Duration;
}

/** A launch's quorum, as its flow step keeps it. */
export type Quorum =
  | ({ readonly kind: "count" } & QuorumOptions)
  | ({ readonly kind: "groups" } & QuorumGroupsOptions);
