import type { AnyClass } from "../container/component-registry.js";
import type { DeclaredTypeOr } from "../container/component-types.js";

/**
 * The base a `@WorkflowStart` class may extend to give `app.execute` its types: the start's input
 * DTO and the finish's output DTO. It adds nothing at run time; `@WorkflowStart` refuses (a compile
 * error) an input that is not its `input` DTO. `agboss types` declares the same types for starts that
 * do not extend it.
 *
 * @example
 * @WorkflowStart({ name: "refund-workflow-start", description: "A request", input: RefundRequestDto })
 * export class RefundWorkflowStart extends WorkflowStartOf<RefundRequestDto, RefundAnswerDto> {}
 *
 * const result = await app.execute(RefundWorkflowStart, { orderId: "ord_1" }, { ownerId: "u1" });
 * result.output; // RefundAnswerDto | undefined
 */
export abstract class WorkflowStartOf<TInput, TOutput = unknown> {
  declare readonly __agbossTypes?: { readonly input: TInput; readonly output: TOutput };
}

/** What `app.execute(TStart, input)` takes: the start's input DTO when its types are declared, else any record. */
export type WorkflowInput<TStart extends AnyClass> = DeclaredTypeOr<
  InstanceType<TStart>,
  "input",
  Record<string, unknown>
>;

/** What `app.execute(TStart, …)` gives as `result.output`: the finish's DTO when declared, else `unknown`. */
export type WorkflowOutput<TStart extends AnyClass> = DeclaredTypeOr<InstanceType<TStart>, "output", unknown>;

/**
 * `unknown` when `TStart` declares no input, or declares exactly `TInput`; else an object type that the
 * class cannot satisfy, naming the declared input, so that `@WorkflowStart` does not compile on it.
 */
export type StartInputMatches<TStart extends AnyClass, TInput> =
  InstanceType<TStart> extends {
    readonly __agbossTypes?: infer D;
  }
    ? [NonNullable<D>] extends [{ readonly input: infer I }]
      ? [TInput] extends [I]
        ? [I] extends [TInput]
          ? unknown
          : { readonly "the class declares another input than @WorkflowStart's input DTO": I }
        : { readonly "the class declares another input than @WorkflowStart's input DTO": I }
      : unknown
    : unknown;
