import type { AnyClass } from "../container/component-registry.js";
import type { DtoClass } from "../dto/dto.js";
import type { FlowDefinition, FlowStep, JoinErrorHandler, LaunchOptions } from "./flow-definition.js";
import type { QuorumGroupsOptions, QuorumOptions } from "./quorum-options.js";

/** A flow being built; finish it with `toFinish`. */
export class FlowBuilder {
  readonly #start: AnyClass;
  readonly #returns: DtoClass | undefined;
  readonly #steps: readonly FlowStep[];

  /** @internal */
  constructor(startClass: AnyClass, returns: DtoClass | undefined, steps: readonly FlowStep[]) {
    this.#start = startClass;
    this.#returns = returns;
    this.#steps = steps;
  }

  /** Declares the DTO the start hands on (its input DTO). */
  returns(dto: DtoClass): FlowBuilder {
    return new FlowBuilder(this.#start, dto, this.#steps);
  }

  /** Runs an agent on what the previous step produced. */
  toAgent(agent: AnyClass): FlowBuilder {
    return new FlowBuilder(this.#start, this.#returns, [...this.#steps, { kind: "agent", agent }]);
  }

  /**
   * Runs several agents at once on what the previous step produced, then joins them: the next step
   * gets `{ results: [{ branch, index, output | error | withdrawn }] }`. A paused branch does not stop
   * its siblings.
   *
   * @example
   * start(ReviewStart).toParallel([LegalAgent, FinanceAgent], { failurePolicy: FailurePolicy.FailFast }).toAgent(SummaryAgent)
   */
  toParallel(agents: readonly AnyClass[], options: LaunchOptions = {}): FlowBuilder {
    return this.#with({ kind: "parallel", agents, items: undefined, options, onJoinError: [] });
  }

  /**
   * Runs another flow, begun at `childStart`, as a child execution on what the previous step produced;
   * its output becomes this step's. A pause inside it is answered from the root like any other.
   */
  toWorkflow(childStart: AnyClass): FlowBuilder {
    return this.#with({ kind: "workflow", start: childStart });
  }

  /** Runs several child flows at once, one branch each, and joins them like `toParallel`. */
  toParallelWorkflows(childStarts: readonly AnyClass[], options: LaunchOptions = {}): FlowBuilder {
    return this.#with({
      kind: "parallel",
      agents: [],
      workflows: childStarts,
      items: undefined,
      options,
      onJoinError: [],
    });
  }

  /** Runs `agent` once per item of the previous step's output (`items` picks them), each branch knowing its `itemIndex`. */
  toEachItem(
    agent: AnyClass,
    options: LaunchOptions & { readonly items: (input: unknown) => readonly unknown[] },
  ): FlowBuilder {
    const { items, ...launch } = options;
    return this.#with({ kind: "parallel", agents: [agent], items, options: launch, onJoinError: [] });
  }

  /**
   * Joins the previous launch by quorum: it is decided as soon as `max` branches count (`count`, default:
   * finished without error), when `max` can no longer be reached, or when its deadline (the launch's or
   * this one's) passes. Then the questions its unfinished branches still wait on are withdrawn and the
   * next step gets a `QuorumJoinOutput`: the outcome and each branch's `BranchVerdict`.
   *
   * @example
   * start(ReviewStart).toParallel([LegalAgent, FinanceAgent, OpsAgent]).joinQuorum({ max: 2, count: (o) => (o as { text: string }).text === "approve" }).toAgent(SummaryAgent)
   */
  joinQuorum(options: QuorumOptions): FlowBuilder {
    const last = this.#steps.at(-1);
    if (last?.kind !== "parallel" || last.quorum !== undefined)
      throw new TypeError(
        "joinQuorum(…) follows a parallel launch without a quorum: toParallel(…) or toEachItem(…).",
      );
    const steps = [...this.#steps.slice(0, -1), { ...last, quorum: { kind: "count" as const, ...options } }];
    return new FlowBuilder(this.#start, this.#returns, steps);
  }

  /**
   * Joins the previous launch by groups: each finished branch joins the first group whose predicate
   * holds; the first group to reach `max` wins. It is decided then, when no group can reach `max` any
   * more, or when its deadline passes; see {@link FlowBuilder.joinQuorum}.
   *
   * @example
   * .toParallel([A, B, C]).joinQuorumGroups({ groups: { approve: (o) => isYes(o), reject: (o) => !isYes(o) }, max: 2 })
   */
  joinQuorumGroups(options: QuorumGroupsOptions): FlowBuilder {
    const last = this.#steps.at(-1);
    if (last?.kind !== "parallel" || last.quorum !== undefined)
      throw new TypeError(
        "joinQuorumGroups(…) follows a parallel launch without a quorum: toParallel(…) or toEachItem(…).",
      );
    const steps = [...this.#steps.slice(0, -1), { ...last, quorum: { kind: "groups" as const, ...options } }];
    return new FlowBuilder(this.#start, this.#returns, steps);
  }

  /**
   * Handles the previous launch's failure when the error, or any error in its cause chain, is a
   * `type`: `handle` returns what the launch outputs instead.
   */
  onJoinError<TError>(
    type: abstract new (...args: never[]) => TError,
    handle: (error: unknown, matched: TError) => unknown,
  ): FlowBuilder {
    const last = this.#steps.at(-1);
    if (last?.kind !== "parallel")
      throw new TypeError("onJoinError(…) follows a parallel launch: toParallel(…) or toEachItem(…).");
    const steps = [
      ...this.#steps.slice(0, -1),
      { ...last, onJoinError: [...last.onJoinError, { type, handle: handle as JoinErrorHandler }] },
    ];
    return new FlowBuilder(this.#start, this.#returns, steps);
  }

  #with(step: FlowStep): FlowBuilder {
    return new FlowBuilder(this.#start, this.#returns, [...this.#steps, step]);
  }

  /** Ends the flow; the last step's output becomes the finish's output DTO. */
  toFinish(finish: AnyClass): FlowDefinition {
    return Object.freeze({ start: this.#start, returns: this.#returns, steps: this.#steps, finish });
  }
}

/**
 * Begins a flow at a `@WorkflowStart`.
 *
 * @example
 * flow: [start(OfficeWorkflowStart).returns(WorkflowStartTextDto).toAgent(OfficeAgent).toFinish(OfficeWorkflowFinish)]
 */
export function start(startClass: AnyClass): FlowBuilder {
  return new FlowBuilder(startClass, undefined, []);
}
