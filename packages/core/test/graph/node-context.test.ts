import { types } from "node:util";
import { getContextVariable, setContextVariable } from "@langchain/core/context";
import { RunnableLambda } from "@langchain/core/runnables";
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import { LangChainTracer } from "@langchain/core/tracers/tracer_langchain";
import {
  Annotation,
  Command,
  getConfig,
  INTERRUPT,
  interrupt,
  MemorySaver,
  START,
  StateGraph,
} from "@langchain/langgraph";
import { describe, expect, test } from "vitest";
import { leanGraph } from "../../src/graph/lean-graphs.js";

const State = Annotation.Root({
  seen: Annotation<unknown[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
});

/** A one-node graph running `step`, LangGraph's own (`lean` false) or as the runtime compiles it. */
function oneNode(step: () => unknown, lean: boolean, checkpointer?: MemorySaver) {
  // biome-ignore lint/suspicious/noExplicitAny: node names are dynamic in this test as in the runtime
  const graph = new StateGraph(State) as unknown as StateGraph<any, any, any, string>;
  graph.addNode("step", async () => ({ seen: [await step()] }));
  graph.addEdge(START, "step");
  const compiled = graph.compile(checkpointer === undefined ? {} : { checkpointer });
  return lean ? leanGraph(compiled) : compiled;
}

/** What the slot of LangChain's async local storage holds now. */
const slot = () =>
  AsyncLocalStorageProviderSingleton.getInstance().getStore() as Record<PropertyKey, unknown>;

describe("a node's context: its config carried without building LangChain's RunTree", () => {
  test("the node finds its task's config (getConfig), and its interrupt is resumed, as in LangGraph's graph", async () => {
    const run = async (lean: boolean) => {
      const graph = oneNode(
        () => {
          const { configurable, metadata } = getConfig();
          const answer = interrupt({ question: "go?" });
          return { thread: configurable?.thread_id, node: metadata?.langgraph_node, answer };
        },
        lean,
        new MemorySaver(),
      );
      const config = { configurable: { thread_id: "t-1" } };
      const paused = (await graph.invoke({}, config)) as Record<string, unknown>;
      const done = await graph.invoke(new Command({ resume: "yes" }), config);
      return { asked: (paused[INTERRUPT] as { value: unknown }[]).map((i) => i.value), done };
    };
    const lean = await run(true);
    expect(lean).toEqual(await run(false));
    expect(lean.done.seen).toEqual([{ thread: "t-1", node: "step", answer: "yes" }]);
  });

  test("holds a stand-in until something else reads it, then LangChain's own RunTree, as it would have built it", async () => {
    const run = async (lean: boolean) =>
      (
        await oneNode(() => {
          const before = types.isProxy(slot());
          // What every runnable the node calls asks first: the RunTree it runs under, if any.
          const tree = LangChainTracer.getTraceableRunTree();
          return {
            before,
            name: tree?.name,
            tracingEnabled: tree?.tracingEnabled,
            thread: getConfig().configurable?.thread_id,
          };
        }, lean).invoke({}, { configurable: { thread_id: "t-2" } })
      ).seen[0] as Record<string, unknown>;
    const plain = await run(false);
    const lean = await run(true);
    expect(lean.before).toBe(true);
    expect(plain.before).toBe(false);
    expect({ ...lean, before: undefined }).toEqual({ ...plain, before: undefined });
    expect(lean).toMatchObject({ name: "<runnable_lambda>", tracingEnabled: false, thread: "t-2" });
  });

  test("context variables reach the node and what it calls; one it sets is read back, its config still found", async () => {
    const run = async (lean: boolean) => {
      const graph = oneNode(async () => {
        const outer = getContextVariable("tenant");
        const nested = await RunnableLambda.from(() => getContextVariable("tenant")).invoke(undefined);
        setContextVariable("step", "refund");
        return {
          outer,
          nested,
          own: getContextVariable("step"),
          thread: getConfig().configurable?.thread_id,
        };
      }, lean);
      // Set around the run, in a scope of its own.
      return AsyncLocalStorageProviderSingleton.getInstance().run(undefined, async () => {
        setContextVariable("tenant", "acme");
        return (await graph.invoke({}, { configurable: { thread_id: "t-3" } })).seen[0];
      });
    };
    const lean = await run(true);
    expect(lean).toEqual(await run(false));
    expect(lean).toEqual({ outer: "acme", nested: "acme", own: "refund", thread: "t-3" });
  });

  test("with a tracer taking part, the node runs under LangChain's own RunTree", async () => {
    const client = {
      createRun: async () => undefined,
      updateRun: async () => undefined,
    } as unknown as ConstructorParameters<typeof LangChainTracer>[0] extends infer F
      ? F extends { client?: infer C }
        ? C
        : never
      : never;
    const tracer = new LangChainTracer({ client, projectName: "node-context-test" });
    const underProxy = async (callbacks: LangChainTracer[]) =>
      (await oneNode(() => types.isProxy(slot()), true).invoke({}, { callbacks })).seen[0];
    expect(await underProxy([tracer])).toBe(false);
    expect(await underProxy([])).toBe(true);
  });

  test("LangChain's runWithConfig is its own again before the node's function starts", async () => {
    const provider = AsyncLocalStorageProviderSingleton;
    const before = provider.runWithConfig;
    const inside = (await oneNode(() => ({ own: Object.hasOwn(provider, "runWithConfig") }), true).invoke({}))
      .seen[0];
    expect(inside).toEqual({ own: false });
    expect(provider.runWithConfig).toBe(before);
  });

  test("a runWithConfig the node installs at its start is not taken back", async () => {
    const provider = AsyncLocalStorageProviderSingleton;
    const langchain = provider.runWithConfig;
    const wrapper = ((...args: Parameters<typeof langchain>) =>
      langchain.apply(provider, args)) as typeof langchain;
    try {
      await oneNode(() => {
        provider.runWithConfig = wrapper;
        return 1;
      }, true).invoke({});
      expect(provider.runWithConfig).toBe(wrapper);
    } finally {
      delete (provider as Partial<typeof provider>).runWithConfig;
    }
  });

  test("reads as LangChain's RunTree does: its extra before and after it is built, a method read twice", async () => {
    const run = async (lean: boolean) =>
      (
        await oneNode(() => {
          const store = slot();
          const extra = store.extra as Record<PropertyKey, unknown>;
          const before = { metadata: extra.metadata, config: Object.getOwnPropertySymbols(extra).length };
          const createChild = store.createChild;
          return { before, sameExtra: store.extra === extra, sameMethod: createChild === store.createChild };
        }, lean).invoke({})
      ).seen[0];
    const lean = await run(true);
    expect(lean).toEqual(await run(false));
    expect(lean).toEqual({ before: { metadata: {}, config: 1 }, sameExtra: true, sameMethod: true });
  });

  test("a node LangGraph traces itself keeps LangGraph's invoke", () => {
    // biome-ignore lint/suspicious/noExplicitAny: node names are dynamic in this test as in the runtime
    const graph = new StateGraph(State) as unknown as StateGraph<any, any, any, string>;
    graph.addNode("step", () => ({ seen: ["step"] }));
    graph.addEdge(START, "step");
    const compiled = graph.compile();
    const bound = compiled.nodes.step?.bound as unknown as { trace: boolean };
    bound.trace = true;
    leanGraph(compiled);
    expect(Object.hasOwn(bound, "invoke")).toBe(false);
    expect(Object.hasOwn(leanGraph(oneNode(() => 1, false)).nodes.step?.bound ?? {}, "invoke")).toBe(true);
  });
});
