import { Runnable } from "@langchain/core/runnables";

/**
 * A conditional edge's path, called as the plain function it is. Given a function, LangGraph wraps it
 * in a `RunnableLambda`, and each call of that configures callbacks, starts and ends a chain run (each
 * with a random id) and builds a tracing context: a cost per step for a route that only reads the
 * state. LangGraph reads a branch's path through `invoke` and names the branch by `getName()`, so this
 * keeps the name a wrapped function gets ("condition"), which checkpoints do not depend on either way.
 * @internal
 */
class Route<S, R> extends Runnable<S, R> {
  lc_namespace = ["agboss", "graph"];
  readonly #route: (state: S) => R;

  constructor(route: (state: S) => R) {
    super();
    this.name = "condition";
    this.#route = route;
  }

  override async invoke(state: S): Promise<R> {
    return this.#route(state);
  }
}

/** `route` as the path of a conditional edge (`graph.addConditionalEdges(source, routeOf(route), …)`). @internal */
export function routeOf<S, R>(route: (state: S) => R): Runnable<S, R> {
  return new Route(route);
}
