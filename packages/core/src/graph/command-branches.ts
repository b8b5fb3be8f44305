import type { PregelNode } from "@langchain/langgraph";

/** The name LangGraph gives the runnable of every branch it compiles into a node's writers. */
const BRANCH_RUN = "<branch_run>";

/**
 * Takes out of each node of a compiled `StateGraph` the branch that reads a `Command` the node returns
 * (its `goto`): `compile` gives one to every node, as the second of its writers, right after the writer
 * of its state update. This runtime's nodes return state updates, never a `Command` (a start or a
 * resume is a command given to `invoke`, which LangGraph reads without that branch), so the branch only
 * costs: two runnables each time a node's task completes, each with a callback manager and a LangSmith
 * `RunTree` of its own, and it stands between the node's two plain writers (its update, and the edge to
 * the next node), which LangGraph merges into one runnable when they are next to each other.
 *
 * A node that declares where a `Command` of its own may go (`addNode(…, { ends })`) keeps its branch.
 * When a node's writers are not as described (another version of LangGraph), the node is left as it
 * is: `command-branches.test.ts` fails then, so an upgrade says so. Returns `compiled`. @internal
 */
export function withoutCommandBranches<T extends { readonly nodes: Record<string, PregelNode> }>(
  compiled: T,
): T {
  for (const node of Object.values(compiled.nodes)) {
    if (node.ends !== undefined && node.ends.length > 0) continue;
    const [update, branch] = node.writers;
    if (update === undefined || branch === undefined) continue;
    if (!Array.isArray((update as { writes?: unknown }).writes) || branch.getName() !== BRANCH_RUN) continue;
    node.writers.splice(1, 1);
  }
  return compiled;
}
