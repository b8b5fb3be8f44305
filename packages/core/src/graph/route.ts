import { Runnable, type RunnableConfig } from "@langchain/core/runnables";

/**
 * A function LangGraph calls through `invoke`, called as the plain function it is. Given a function,
 * LangGraph wraps it in a runnable of its own (a `RunnableLambda`, a `RunnableCallable`), and each call
 * of that configures callbacks and builds a tracing context with random ids: a cost per step for a
 * function that only reads its input. `name` is what `getName()` answers (LangGraph names a branch by
 * its path's name), so a replacement can keep the name the wrapped function had.
 * @internal
 */
class PlainRunnable<I, O> extends Runnable<I, O> {
  lc_namespace = ["agboss", "graph"];
  readonly #call: (input: I, config?: RunnableConfig) => O | Promise<O>;

  constructor(name: string, call: (input: I, config?: RunnableConfig) => O | Promise<O>) {
    super();
    this.name = name;
    this.#call = call;
  }

  override async invoke(input: I, config?: RunnableConfig): Promise<O> {
    return this.#call(input, config);
  }
}

/** `call` as a runnable named `name`, called as it is (see {@link PlainRunnable}). @internal */
export function plainRunnable<I, O>(
  name: string,
  call: (input: I, config?: RunnableConfig) => O | Promise<O>,
): Runnable<I, O> {
  return new PlainRunnable(name, call);
}

/**
 * `route` as the path of a conditional edge (`graph.addConditionalEdges(source, routeOf(route), …)`),
 * named as a wrapped function would be ("condition"), which checkpoints do not depend on either way.
 * @internal
 */
export function routeOf<S, R>(route: (state: S) => R): Runnable<S, R> {
  return plainRunnable("condition", route);
}
