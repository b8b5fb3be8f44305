import type { PregelNode } from "@langchain/langgraph";

/** The name LangGraph gives the runnable of every branch it compiles into a node's writers. */
const BRANCH_RUN = "<branch_run>";

/** What {@link withoutCommandBranches} reads of a compiled `StateGraph`. */
interface CompiledStateGraphLike {
  readonly nodes: Record<string, PregelNode>;
  /** The graph it was compiled from: its conditional edges by source node. */
  readonly builder: { readonly branches: Record<string, Record<string, unknown>> };
}

/**
 * Takes out of each node of a compiled `StateGraph` the branch that follows a `Command` the node returns
 * (its `goto`): `compile` gives one to every node, as the second of its writers, right after the writer
 * of its state update and before its edges and conditional edges. This runtime's nodes return state
 * updates, never a `Command` (a start or a resume is a command given to `invoke`, which LangGraph reads
 * without that branch), so the branch only costs: two runnables each time one of the node's tasks
 * completes, each with a callback manager and a LangSmith `RunTree` of its own. And where it stood
 * between the node's update writer and its plain edge, LangGraph now runs those two as one.
 *
 * Left in place: the branch of a node that declares where a `Command` of its own may go (`addNode(…,
 * { ends })`), and of an error handler LangGraph adds (it routes with `Command`). A node is also left as
 * it is unless its writers hold exactly one branch more than the conditional edges the graph gives it,
 * the second writer being one: so a LangGraph that compiles nodes otherwise (no such branch, or another
 * place for it) loses no route. `lean-graphs.test.ts` fails then, so an upgrade says so.
 * Returns `compiled`. @internal
 */
export function withoutCommandBranches<T extends CompiledStateGraphLike>(compiled: T): T {
  for (const [name, node] of Object.entries(compiled.nodes)) {
    if ((node.ends !== undefined && node.ends.length > 0) || node.isErrorHandler === true) continue;
    const [update, branch] = node.writers;
    if (update === undefined || branch === undefined) continue;
    if (!Array.isArray((update as { writes?: unknown }).writes) || branch.getName() !== BRANCH_RUN) continue;
    const routes = Object.keys(compiled.builder.branches[name] ?? {}).length;
    if (node.writers.filter((writer) => writer.getName() === BRANCH_RUN).length !== routes + 1) continue;
    node.writers.splice(1, 1);
  }
  return compiled;
}
