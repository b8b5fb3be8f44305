import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import { Annotation, Command, END, START, StateGraph } from "@langchain/langgraph";
import { afterEach, describe, expect, test } from "vitest";
import { withoutCommandBranches } from "../../src/graph/lean-graphs.js";
import { routeOf } from "../../src/graph/route.js";

const State = Annotation.Root({
  visits: Annotation<string[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
  turns: Annotation<number>({ reducer: (_, b) => b, default: () => 0 }),
});
type Value = typeof State.State;

/** A model turn routed by a conditional edge, and a tool node with a plain edge back: an agent step's shape. */
function agentShaped() {
  // biome-ignore lint/suspicious/noExplicitAny: node names are dynamic in this test as in the runtime
  const graph = new StateGraph(State) as unknown as StateGraph<any, any, any, string>;
  graph.addNode("model", (s: Value) => ({ visits: ["model"], turns: s.turns + 1 }));
  graph.addNode("tools", () => ({ visits: ["tools"] }));
  graph.addEdge(START, "model");
  graph.addConditionalEdges(
    "model",
    routeOf((s: Value) => (s.turns < 3 ? "tools" : END)),
    ["tools", END],
  );
  graph.addEdge("tools", "model");
  return graph;
}

const branchRuns = (writers: readonly { getName(): string }[]) =>
  writers.filter((w) => w.getName() === "<branch_run>").length;

/** Counts LangChain's runnables started, as the bench's `--trace-store` does. */
const provider = AsyncLocalStorageProviderSingleton;
const runWithConfig = provider.runWithConfig;
let started = 0;
function countRunnables(): void {
  started = 0;
  provider.runWithConfig = ((config: never, callback: () => unknown, avoid?: boolean) => {
    started += 1;
    return runWithConfig.call(provider, config, callback, avoid);
  }) as typeof provider.runWithConfig;
}
afterEach(() => {
  provider.runWithConfig = runWithConfig;
});

describe("withoutCommandBranches", () => {
  test("takes out the Command branch LangGraph compiles into each node, and keeps the routes", () => {
    const plain = agentShaped().compile();
    // As LangGraph 1.7 compiles them: the update's writer, the Command branch, then the edges and routes.
    expect(branchRuns(plain.nodes.model?.writers ?? [])).toBe(2);
    expect(branchRuns(plain.nodes.tools?.writers ?? [])).toBe(1);

    const lean = withoutCommandBranches(agentShaped().compile());
    expect(branchRuns(lean.nodes.model?.writers ?? [])).toBe(1);
    expect(branchRuns(lean.nodes.tools?.writers ?? [])).toBe(0);
    expect(branchRuns(lean.nodes[START]?.writers ?? [])).toBe(0);
  });

  test("runs the graph as before, starting fewer runnables", async () => {
    countRunnables();
    const before = await agentShaped().compile().invoke({});
    const plainRunnables = started;
    countRunnables();
    const after = await withoutCommandBranches(agentShaped().compile()).invoke({});
    expect(after).toEqual(before);
    expect(after.visits).toEqual(["model", "tools", "model", "tools", "model"]);
    // Two a task, the branch and its path (START's task, three model turns and two tool calls), and one
    // more where the update's writer and a plain edge's become one (START's task and the tool calls).
    expect(plainRunnables - started).toBe(15);
  });

  test("leaves alone a node whose writers hold no branch besides its routes (applied twice: routes kept)", async () => {
    const twice = withoutCommandBranches(withoutCommandBranches(agentShaped().compile()));
    expect(branchRuns(twice.nodes.model?.writers ?? [])).toBe(1);
    expect((await twice.invoke({})).visits).toEqual(["model", "tools", "model", "tools", "model"]);
  });

  test("keeps the branch of an error handler LangGraph adds, which routes with a Command", async () => {
    // biome-ignore lint/suspicious/noExplicitAny: node names are dynamic in this test as in the runtime
    const graph = new StateGraph(State) as unknown as StateGraph<any, any, any, string>;
    graph.addNode(
      "flaky",
      () => {
        throw new Error("down");
      },
      { errorHandler: () => new Command({ update: { visits: ["handled"] }, goto: "after" }) },
    );
    graph.addNode("after", () => ({ visits: ["after"] }));
    graph.addEdge(START, "flaky");
    const lean = withoutCommandBranches(graph.compile());
    expect((await lean.invoke({})).visits).toEqual(["handled", "after"]);
  });

  test("keeps the branch of a node that declares where its Command goes (ends)", async () => {
    const build = () => {
      // biome-ignore lint/suspicious/noExplicitAny: node names are dynamic in this test as in the runtime
      const graph = new StateGraph(State) as unknown as StateGraph<any, any, any, string>;
      graph.addNode("decide", () => new Command({ update: { visits: ["decide"] }, goto: "after" }), {
        ends: ["after"],
      });
      graph.addNode("after", () => ({ visits: ["after"] }));
      graph.addEdge(START, "decide");
      return graph;
    };
    const lean = withoutCommandBranches(build().compile());
    expect(branchRuns(lean.nodes.decide?.writers ?? [])).toBe(1);
    expect((await lean.invoke({})).visits).toEqual(["decide", "after"]);
  });
});
