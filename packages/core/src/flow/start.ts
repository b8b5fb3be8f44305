import type { AnyClass } from "../components/component-registry.js";
import type { DtoClass } from "../dto/dto.js";
import type { FlowDefinition, FlowStep } from "./flow-definition.js";

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
