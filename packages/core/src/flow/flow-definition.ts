import type { AnyClass } from "../container/component-registry.js";
import type { DtoClass } from "../dto/dto.js";
import type { Duration } from "../time/duration.js";
import type { FailurePolicy } from "./failure-policy.js";
import type { Quorum } from "./quorum-options.js";

/** How a parallel launch runs and joins its branches. */
export interface LaunchOptions {
  /** Default `FailurePolicy.FailFast`. */
  readonly failurePolicy?: FailurePolicy;
  /** At most this many branches run at once; a paused branch frees its slot. Default: all. */
  readonly maxConcurrency?: number;
  /** Elapsed time on the application's Clock, pauses included, after which unfinished branches are withdrawn. */
  readonly deadline?: Duration;
}

/** Handles a join's failure: returns what the launch outputs instead. */
export type JoinErrorHandler = (error: unknown, matched: never) => unknown;

/** One step of a flow. */
export type FlowStep =
  | { readonly kind: "agent"; readonly agent: AnyClass }
  /** Runs another flow, begun at its start, as a child execution. */
  | { readonly kind: "workflow"; readonly start: AnyClass }
  | {
      readonly kind: "parallel";
      /** One branch per agent, each on the step's input. */
      readonly agents: readonly AnyClass[];
      /** Or one branch per child flow (given by its start), each a child execution. */
      readonly workflows?: readonly AnyClass[];
      /** For a per-item launch: the items of the step's input, one branch each. */
      readonly items: ((input: unknown) => readonly unknown[]) | undefined;
      readonly options: LaunchOptions;
      /** Set by `.joinQuorum(…)` / `.joinQuorumGroups(…)`: the join decides by quorum. */
      readonly quorum?: Quorum | undefined;
      readonly onJoinError: readonly {
        readonly type: abstract new (...args: never[]) => unknown;
        readonly handle: JoinErrorHandler;
      }[];
    };

/** A compiled-to-be flow: from a start, through steps, to a finish. Built with {@link start}. */
export interface FlowDefinition {
  readonly start: AnyClass;
  /** The DTO the start hands to the first step. */
  readonly returns: DtoClass | undefined;
  readonly steps: readonly FlowStep[];
  readonly finish: AnyClass;
}
