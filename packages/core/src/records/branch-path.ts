/** Where a step runs inside parallel launches: the launch branches it waits under, outermost first. @internal */
export interface BranchPath {
  /** One entry per enclosing launch: its node id and the branch's index (and item, for a per-item launch). */
  readonly launches: readonly {
    /** The execution the launch belongs to (the root's, or a child's): launch ids repeat across flows. */
    readonly executionId: string;
    readonly launchId: string;
    readonly index: number;
    readonly itemIndex?: number | undefined;
  }[];
}
