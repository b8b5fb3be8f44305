import type { Budget, BudgetLimits } from "../budgets/budget.js";
import { ComponentKind } from "../container/component-kind.js";
import { type AnyClass, componentDecorator } from "../container/component-registry.js";
import type { DtoClass } from "../dto/dto.js";
import type { FlowDefinition } from "../flow/flow-definition.js";
import type { PiiPolicy } from "../pii/pii-policy.js";
import type { StartInputMatches } from "./workflow-start-of.js";

/** What `@Workflow` declares. */
export interface WorkflowOptions {
  /** Ends with `-workflow`. */
  readonly name: string;
  /** Semantic version of the flow, recorded on every execution. */
  readonly version: string;
  readonly description?: string;
  /** One flow per start, built with `start(…)`. */
  readonly flow: readonly FlowDefinition[];
  /** Limits on the model calls of all this workflow's executions, built with `budget({ … })`. */
  readonly budgets?: readonly Budget[];
  /** The limits of each execution tree, unless `app.execute(…, { budget })` gives its own. */
  readonly executionBudget?: BudgetLimits;
  /** Added to the application's PII policies for this workflow's model calls. */
  readonly piiPolicies?: readonly PiiPolicy[];
}

/** Declares a workflow. */
export function Workflow(options: WorkflowOptions) {
  return componentDecorator(ComponentKind.Workflow, options);
}

/** What `@WorkflowStart` declares. */
export interface WorkflowStartOptions<TInputDto extends DtoClass = DtoClass> {
  /** Ends with `-workflow-start`. */
  readonly name: string;
  readonly description: string;
  /** The DTO `app.execute(Start, input)` validates. */
  readonly input: TInputDto;
}

/**
 * Declares how a workflow is started: `app.execute(Start, input)`. A class that extends
 * `WorkflowStartOf<Input, Output>` must name `Input` here; another DTO is a compile error.
 */
export function WorkflowStart<TInputDto extends DtoClass>(options: WorkflowStartOptions<TInputDto>) {
  return componentDecorator(ComponentKind.WorkflowStart, options) as <TClass extends AnyClass>(
    target: TClass & StartInputMatches<TClass, InstanceType<TInputDto>>,
    context?: ClassDecoratorContext,
  ) => void;
}

/** What `@WorkflowFinish` declares. */
export interface WorkflowFinishOptions {
  /** Ends with `-workflow-finish`. */
  readonly name: string;
  readonly description: string;
  /** The DTO of `result.output`. */
  readonly output: DtoClass;
}

/** Declares how a workflow finishes: the DTO of its output. */
export function WorkflowFinish(options: WorkflowFinishOptions) {
  return componentDecorator(ComponentKind.WorkflowFinish, options);
}
