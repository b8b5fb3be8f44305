import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { Runnable } from "@langchain/core/runnables";
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import {
  Annotation,
  Command,
  END,
  getConfig,
  INTERRUPT,
  interrupt,
  MemorySaver,
  Send,
  START,
  StateGraph,
} from "@langchain/langgraph";
import { Pregel } from "@langchain/langgraph/pregel";
import { afterEach, describe, expect, test } from "vitest";
import { leanGraph } from "../../src/graph/lean-graphs.js";
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

/** The entries of a node's first writer (its state update's). */
function updateWrites(node: { writers: readonly unknown[] } | undefined): { mapper?: unknown }[] {
  const writes = (node?.writers[0] as { writes?: unknown } | undefined)?.writes;
  return Array.isArray(writes) ? writes : [];
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

/** LangGraph's own `invoke` of `graph` (through `stream`), whatever `invoke` the graph has now. */
// biome-ignore lint/suspicious/noExplicitAny: the graphs' value types differ from test to test
const viaStream = (graph: unknown, input: unknown, config?: unknown): Promise<any> =>
  Pregel.prototype.invoke.call(graph as never, input as never, config as never);

describe("leanGraph: the branch that follows a Command", () => {
  test("takes out the Command branch LangGraph compiles into each node, and keeps the routes", () => {
    const plain = agentShaped().compile();
    // As LangGraph 1.7 compiles them: the update's writer, the Command branch, then the edges and routes.
    expect(branchRuns(plain.nodes.model?.writers ?? [])).toBe(2);
    expect(branchRuns(plain.nodes.tools?.writers ?? [])).toBe(1);

    const lean = leanGraph(agentShaped().compile());
    expect(branchRuns(lean.nodes.model?.writers ?? [])).toBe(1);
    expect(branchRuns(lean.nodes.tools?.writers ?? [])).toBe(0);
    expect(branchRuns(lean.nodes[START]?.writers ?? [])).toBe(0);
  });

  test("runs the graph as before, starting fewer runnables", async () => {
    countRunnables();
    const before = await agentShaped().compile().invoke({});
    const plainRunnables = started;
    countRunnables();
    // Through LangGraph's own invoke, as the plain graph runs: the direct one is counted apart below.
    const after = await viaStream(leanGraph(agentShaped().compile()), {});
    expect(after).toEqual(before);
    expect(after.visits).toEqual(["model", "tools", "model", "tools", "model"]);
    // For each of the 6 tasks (START's, three model turns, two tool calls): the branch and its path, the
    // update's mapper and its writer; one more where the update's writer and a plain edge's become one
    // (START's task and the tool calls); and the route of each model turn. And for each of the 5 node
    // tasks, the context set up by LangChain, which carries its config without it (node-context.ts).
    expect(plainRunnables - started).toBe(35);
  });

  test("leaves alone a node whose writers hold no branch besides its routes (applied twice: routes kept)", async () => {
    const twice = leanGraph(leanGraph(agentShaped().compile()));
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
    const lean = leanGraph(graph.compile());
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
    const lean = leanGraph(build().compile());
    expect(branchRuns(lean.nodes.decide?.writers ?? [])).toBe(1);
    expect((await lean.invoke({})).visits).toEqual(["decide", "after"]);
  });
});

describe("leanGraph: the update's mapper", () => {
  test("is called as it is: a node's update lands, and a return value that is no update still fails", async () => {
    const build = (returns: unknown) => {
      // biome-ignore lint/suspicious/noExplicitAny: node names are dynamic in this test as in the runtime
      const graph = new StateGraph(State) as unknown as StateGraph<any, any, any, string>;
      graph.addNode("step", () => returns);
      graph.addEdge(START, "step");
      return leanGraph(graph.compile());
    };
    const mappers = updateWrites(build({}).nodes.step)
      .map((entry) => (entry.mapper as Runnable | undefined)?.getName())
      .filter((name) => name !== undefined);
    expect(mappers).toEqual(["update-mapper"]);
    expect(await build({ visits: ["step"], turns: 7 }).invoke({})).toEqual({ visits: ["step"], turns: 7 });
    await expect(build("not an update").invoke({})).rejects.toThrow(/to return an object/);
  });

  test("stays LangGraph's own when it is not built as LangGraph builds the update's mapper", () => {
    const compiled = agentShaped().compile();
    const mapper = updateWrites(compiled.nodes.tools)[0]?.mapper as { recurse: boolean } | undefined;
    expect(mapper?.recurse).toBe(false);
    if (mapper !== undefined) mapper.recurse = true;
    leanGraph(compiled);
    expect((updateWrites(compiled.nodes.tools)[0]?.mapper as Runnable | undefined)?.getName()).not.toBe(
      "update-mapper",
    );
  });
});

describe("leanGraph: the same runs as LangGraph's own graph", () => {
  test("a route that sends each branch its own input (Send), and the branches' updates", async () => {
    const build = () => {
      // biome-ignore lint/suspicious/noExplicitAny: node names are dynamic in this test as in the runtime
      const graph = new StateGraph(State) as unknown as StateGraph<any, any, any, string>;
      graph.addNode("launch", () => ({ visits: ["launch"] }));
      graph.addNode("branch", (item: { name: string }) => ({ visits: [`branch ${item.name}`] }));
      graph.addNode("join", (s: Value) => ({ visits: ["join"], turns: s.visits.length }));
      graph.addEdge(START, "launch");
      graph.addConditionalEdges(
        "launch",
        routeOf(() => ["a", "b", "c"].map((name) => new Send("branch", { name }))),
        ["branch"],
      );
      graph.addEdge("branch", "join");
      return graph.compile();
    };
    const before = await build().invoke({});
    const after = await leanGraph(build()).invoke({});
    expect(after).toEqual(before);
    expect([...after.visits].sort()).toEqual(["branch a", "branch b", "branch c", "join", "launch"]);
  });

  test("a node that interrupts, resumed from its checkpoint, with the state it wrote before", async () => {
    const run = async (lean: boolean) => {
      // biome-ignore lint/suspicious/noExplicitAny: node names are dynamic in this test as in the runtime
      const graph = new StateGraph(State) as unknown as StateGraph<any, any, any, string>;
      graph.addNode("ask", () => ({ visits: ["asked"] }));
      graph.addNode("wait", () => ({ visits: [`answer ${String(interrupt({ question: "refund?" }))}`] }));
      graph.addEdge(START, "ask");
      graph.addEdge("ask", "wait");
      const compiled = graph.compile({ checkpointer: new MemorySaver() });
      const graphOf = lean ? leanGraph(compiled) : compiled;
      const config = { configurable: { thread_id: "t" } };
      const paused = (await graphOf.invoke({}, config)) as Record<string, unknown>;
      const done = await graphOf.invoke(new Command({ resume: "yes" }), config);
      // An interrupt's id comes from its task's namespace, which differs from run to run.
      return { paused: (paused[INTERRUPT] as { value: unknown }[]).map((i) => i.value), done };
    };
    const before = await run(false);
    const after = await run(true);
    expect(after).toEqual(before);
    expect(after.done.visits).toEqual(["asked", "answer yes"]);
  });

  test("a node with two plain edges (its writers joined once, in order), and a route that fails", async () => {
    const fanOut = () => {
      // biome-ignore lint/suspicious/noExplicitAny: node names are dynamic in this test as in the runtime
      const graph = new StateGraph(State) as unknown as StateGraph<any, any, any, string>;
      graph.addNode("a", () => ({ visits: ["a"] }));
      graph.addNode("b", () => ({ visits: ["b"] }));
      graph.addNode("c", () => ({ visits: ["c"] }));
      graph.addEdge(START, "a");
      graph.addEdge("a", "b");
      graph.addEdge("a", "c");
      return graph.compile();
    };
    const lean = leanGraph(fanOut());
    expect(lean.nodes.a?.writers).toHaveLength(1);
    const after = await lean.invoke({});
    expect(after).toEqual(await fanOut().invoke({}));
    expect([...after.visits].sort()).toEqual(["a", "b", "c"]);

    const lost = () => {
      // biome-ignore lint/suspicious/noExplicitAny: node names are dynamic in this test as in the runtime
      const graph = new StateGraph(State) as unknown as StateGraph<any, any, any, string>;
      graph.addNode("model", () => ({ visits: ["model"] }));
      graph.addEdge(START, "model");
      graph.addConditionalEdges(
        "model",
        routeOf(() => "nowhere"),
        { tools: "model" },
      );
      return graph.compile();
    };
    const plainError = await lost()
      .invoke({})
      .catch((error: unknown) => error);
    await expect(leanGraph(lost()).invoke({})).rejects.toThrow((plainError as Error).message);
  });

  test("leaves a writer alone that is not LangGraph's untraced runnable around a function", () => {
    const compiled = agentShaped().compile();
    const tools = compiled.nodes.tools?.writers[0] as unknown as { trace: boolean };
    tools.trace = true;
    // As a writer class with an `invoke` of its own would be.
    const start = compiled.nodes[START]?.writers[0] as unknown as { invoke: unknown };
    const own = async () => undefined;
    start.invoke = own;
    leanGraph(compiled);
    expect(Object.hasOwn(tools, "invoke")).toBe(false);
    expect(start.invoke).toBe(own);
    expect(Object.hasOwn(compiled.nodes.model?.writers[0] ?? {}, "invoke")).toBe(true);
  });
});

describe("leanGraph: invoke reads LangGraph's iterator directly", () => {
  test("sets up one context for the run, not one for each step read through the stream", async () => {
    countRunnables();
    const lean = leanGraph(agentShaped().compile());
    const streamed = await viaStream(lean, {});
    const throughStream = started;
    countRunnables();
    const direct = await lean.invoke({});
    expect(direct).toEqual(streamed);
    // The run's own (the five node tasks carry their config without one, see node-context.ts); the
    // stream sets one up for each of its reads instead.
    expect(started).toBe(1);
    expect(throughStream).toBeGreaterThan(started);
  });

  test("a subgraph a node invokes reads and writes under the node's task: interrupted and resumed", async () => {
    const run = async (lean: boolean) => {
      const leaned = <T extends Parameters<typeof leanGraph>[0]>(g: T) => (lean ? leanGraph(g) : g);
      // biome-ignore lint/suspicious/noExplicitAny: node names are dynamic in this test as in the runtime
      const inner = new StateGraph(State) as unknown as StateGraph<any, any, any, string>;
      inner.addNode("ask", () => ({ visits: [`inner ${String(interrupt({ question: "go?" }))}`] }));
      inner.addEdge(START, "ask");
      const child = leaned(inner.compile());
      // biome-ignore lint/suspicious/noExplicitAny: node names are dynamic in this test as in the runtime
      const outer = new StateGraph(State) as unknown as StateGraph<any, any, any, string>;
      outer.addNode("before", () => ({ visits: ["before"] }));
      // With a configurable of its own, which goes with the task's rather than in its place.
      const invoked = (input: unknown) => child.invoke(input as never, { configurable: { caller: "visit" } });
      outer.addNode("visit", async () => ({ visits: (await invoked({ visits: [] })).visits }));
      outer.addEdge(START, "before");
      outer.addEdge("before", "visit");
      const checkpointer = new MemorySaver();
      const graph = leaned(outer.compile({ checkpointer }));
      const config = { configurable: { thread_id: "t" } };
      const paused = (await graph.invoke({}, config)) as Record<string, unknown>;
      const done = await graph.invoke(new Command({ resume: "yes" }), config);
      const namespaces = new Set<string>();
      for await (const saved of checkpointer.list({ configurable: { thread_id: "t" } })) {
        namespaces.add(String(saved.config.configurable?.checkpoint_ns ?? "").split(":")[0] ?? "");
      }
      return {
        paused: (paused[INTERRUPT] as { value: unknown }[]).map((i) => i.value),
        done,
        namespaces: [...namespaces].sort(),
      };
    };
    const before = await run(false);
    const after = await run(true);
    expect(after).toEqual(before);
    expect(after.done.visits).toEqual(["before", "inner yes"]);
    expect(after.namespaces).toEqual(["", "visit"]);
  });

  test("a subgraph a node invokes runs on, as LangGraph's does, when a task beside the node fails", async () => {
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const run = async (lean: boolean) => {
      const leaned = <T extends Parameters<typeof leanGraph>[0]>(g: T) => (lean ? leanGraph(g) : g);
      /** For each run of the subgraph's node: whether its signal was aborted when it ended. */
      const aborted: boolean[] = [];
      // biome-ignore lint/suspicious/noExplicitAny: node names are dynamic in this test as in the runtime
      const inner = new StateGraph(State) as unknown as StateGraph<any, any, any, string>;
      inner.addNode("slow", async () => {
        await pause(30);
        aborted.push(getConfig().signal?.aborted ?? false);
        return { visits: ["slow"] };
      });
      inner.addEdge(START, "slow");
      const child = leaned(inner.compile());
      // biome-ignore lint/suspicious/noExplicitAny: node names are dynamic in this test as in the runtime
      const outer = new StateGraph(State) as unknown as StateGraph<any, any, any, string>;
      outer.addNode("visit", async () => ({ visits: (await child.invoke({ visits: [] })).visits }));
      outer.addNode("fails", async () => {
        await pause(5);
        throw new Error("tool down");
      });
      outer.addEdge(START, "visit");
      outer.addEdge(START, "fails");
      await expect(leaned(outer.compile()).invoke({})).rejects.toThrow("tool down");
      await pause(60);
      return aborted;
    };
    const lean = await run(true);
    expect(lean).toEqual(await run(false));
    expect(lean).toEqual([false]);
  });

  test("a timeout given with the call ends it at its deadline, with the deadline's error, as LangGraph's", {
    timeout: 3_000,
  }, async () => {
    const slow = () => {
      // biome-ignore lint/suspicious/noExplicitAny: node names are dynamic in this test as in the runtime
      const graph = new StateGraph(State) as unknown as StateGraph<any, any, any, string>;
      graph.addNode(
        "slow",
        () => new Promise((resolve) => setTimeout(() => resolve({ visits: ["late"] }), 300)),
      );
      graph.addEdge(START, "slow");
      return graph.compile();
    };
    const errorOf = (invoked: Promise<unknown>) =>
      invoked.then(
        () => undefined,
        (error: unknown) => error,
      );
    const plain = (await errorOf(slow().invoke({}, { timeout: 20 }))) as Error;
    const began = Date.now();
    const lean = (await errorOf(leanGraph(slow()).invoke({}, { timeout: 20 }))) as Error;
    expect(Date.now() - began).toBeLessThan(250);
    expect(lean.name).toBe(plain.name);
    expect(lean.message).toBe(plain.message);
  });

  test("a config it cannot run with rejects the call, as LangGraph's invoke does, rather than throwing", async () => {
    const lean = leanGraph(agentShaped().compile());
    let invoked: Promise<unknown> | undefined;
    expect(() => {
      invoked = lean.invoke({}, { timeout: 0 });
    }).not.toThrow();
    await expect(invoked).rejects.toThrow(/positive/);
  });

  test("a call in another stream mode, or with subgraphs, runs LangGraph's invoke", async () => {
    const lean = leanGraph(agentShaped().compile());
    const updates = await lean.invoke({}, { streamMode: "updates" });
    expect(updates).toEqual(await agentShaped().compile().invoke({}, { streamMode: "updates" }));
    expect(Array.isArray(updates)).toBe(true);
  });

  test("the caller's signal stops the run at once, even while a node does not heed it", {
    timeout: 3_000,
  }, async () => {
    // biome-ignore lint/suspicious/noExplicitAny: node names are dynamic in this test as in the runtime
    const graph = new StateGraph(State) as unknown as StateGraph<any, any, any, string>;
    graph.addNode("stuck", () => new Promise<never>(() => undefined));
    graph.addEdge(START, "stuck");
    const controller = new AbortController();
    const invoked = leanGraph(graph.compile()).invoke({}, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error("lease lost")), 10);
    await expect(invoked).rejects.toThrow("lease lost");
  });

  test("a graph whose invoke is not LangGraph's own keeps it", async () => {
    const compiled = agentShaped().compile();
    const own = async () => ({ visits: ["own"] });
    Object.defineProperty(compiled, "invoke", { value: own, configurable: true });
    expect(leanGraph(compiled).invoke).toBe(own);
  });
});

describe("leanGraph: a node's task", () => {
  test("is built once for the node, not for each task", () => {
    const model = leanGraph(agentShaped().compile()).nodes.model;
    expect(model?.getNode()).toBeDefined();
    expect(model?.getNode()).toBe(model?.getNode());
    const plain = agentShaped().compile().nodes.model;
    expect(plain?.getNode()).not.toBe(plain?.getNode());
  });

  test("shows the same runs to callbacks as LangGraph's own graph", async () => {
    /** The runs a callback handler is told of that a trace shows (name and tags), in the order they start. */
    const runsOf = async (graph: { invoke(input: unknown, config: unknown): Promise<unknown> }) => {
      const runs: string[] = [];
      const handler = new (class extends BaseCallbackHandler {
        name = "runs";
        override handleChainStart(...args: unknown[]) {
          // (chain, inputs, runId, parentRunId, tags, metadata, runType, runName)
          const tags = (args[4] ?? []) as string[];
          const id = ((args[0] as { id?: string[] } | undefined)?.id ?? []).join(".");
          if (!tags.includes("langsmith:hidden")) runs.push(`${String(args[7])} ${id} [${tags.join(", ")}]`);
        }
      })();
      await graph.invoke({}, { callbacks: [handler] });
      return runs;
    };
    const lean = await runsOf(leanGraph(agentShaped().compile()));
    expect(lean).toEqual(await runsOf(agentShaped().compile()));
    expect(lean.filter((run) => run.startsWith("model "))).toHaveLength(3);
  });

  test("ends when a task beside it fails, even while its node does not heed the signal", {
    timeout: 3_000,
  }, async () => {
    // biome-ignore lint/suspicious/noExplicitAny: node names are dynamic in this test as in the runtime
    const graph = new StateGraph(State) as unknown as StateGraph<any, any, any, string>;
    graph.addNode("stuck", () => new Promise<never>(() => undefined));
    graph.addNode("fails", async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      throw new Error("tool down");
    });
    graph.addEdge(START, "stuck");
    graph.addEdge(START, "fails");
    await expect(leanGraph(graph.compile()).invoke({})).rejects.toThrow("tool down");
  });
});
