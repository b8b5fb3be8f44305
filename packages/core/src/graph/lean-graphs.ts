import {
  ensureConfig,
  pickRunnableConfigKeys,
  Runnable,
  type RunnableConfig,
  RunnableSequence,
  raceWithSignal,
} from "@langchain/core/runnables";
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import { getConfig, INTERRUPT, isInterrupted, type PregelNode } from "@langchain/langgraph";
import { Pregel } from "@langchain/langgraph/pregel";
import { callWithLightContext } from "./node-context.js";
import { plainRunnable } from "./route.js";

// What the runtime takes out of the graphs LangGraph compiles for it. Every runnable LangGraph starts
// for a task configures a callback manager and builds a LangSmith `RunTree` with a random id to carry
// its config, tracing or not (about 20 µs each on Node 26), and comes with its promises and config
// objects. Much of that does nothing this runtime needs: the branch that follows a `Command` a node
// returns, the context set up around the mapper of a node's update and around its writers, the
// `RunTree` built around each node call, the sequence LangGraph builds for every task, and the streams
// `stream` builds around the steps `invoke` reads (see {@link leanGraph}). Each is found by how
// LangGraph 1.7 compiles and runs a `StateGraph`; what is built otherwise is left as it is, and
// `lean-graphs.test.ts` fails, so an upgrade says so.

/** The name LangGraph gives the runnable of every branch it compiles into a node's writers. */
const BRANCH_RUN = "<branch_run>";

/** The marker of a write entry whose value is the node's own return value. */
const PASSTHROUGH = Symbol.for("LG_PASSTHROUGH");

/** What {@link leanGraph} reads of a compiled `StateGraph`. */
interface CompiledStateGraphLike {
  readonly nodes: Record<string, PregelNode>;
  invoke(input: never, options?: never): Promise<unknown>;
  /** The graph it was compiled from: its conditional edges by source node. */
  readonly builder: { readonly branches: Record<string, Record<string, unknown>> };
}

/** A write entry of a node's update writer, as LangGraph builds it. */
interface WriteEntry {
  readonly value?: unknown;
  mapper?: unknown;
}

/** LangGraph's runnable around a plain function, as its update writer's mapper is built. */
interface FunctionRunnable {
  readonly func: (input: unknown, config?: RunnableConfig) => unknown;
  readonly trace: boolean;
  readonly recurse: boolean;
}

/**
 * Takes out of each node of a compiled `StateGraph` what it does not need, and returns `compiled`:
 * - **The branch that follows a `Command`** the node returns (its `goto`). `compile` gives one to every
 *   node, as the second of its writers, right after the writer of its state update and before its edges
 *   and conditional edges. This runtime's nodes return state updates, never a `Command` (a start or a
 *   resume is a command given to `invoke`, which LangGraph reads without that branch), so the branch
 *   only costs two runnables each time one of the node's tasks completes, and it stood between the
 *   node's update writer and its plain edges, which can now be joined (below). Left in place for a node
 *   that declares where a `Command` of its own may go (`addNode(…, { ends })`), for an error handler
 *   LangGraph adds (it routes with `Command`), and for a node whose writers do not hold exactly one
 *   branch more than the conditional edges the graph gives it, the second writer being one: so a
 *   LangGraph that compiles nodes otherwise loses no route.
 * - **The context around the update's mapper**: the function that turns the node's return value into
 *   channel writes (its keys of the state, a `Command`'s update) runs inside a runnable of its own. It
 *   reads nothing but its input, so it is called as it is. Only a mapper built as LangGraph builds this
 *   one (its own runnable around a function, untraced, not recursing) is replaced.
 * - **The context around the node's writers**: the writer of its update (with the plain edges after it,
 *   which LangGraph would join to it for every task anyway, joined once here) and the runnable of each
 *   conditional edge are LangGraph's untraced runnables around a function, and LangGraph's code in them
 *   reads its config from its arguments (the task's, which carries the channels to write and read). So
 *   their `invoke` calls the function as it is, when it is `RunnableCallable`'s own (taken from the
 *   mapper above, so a writer class with an `invoke` of its own is left alone). A route's own function
 *   (the runtime's routes, a launch's `items`) then runs in the context of the pass, not of the task:
 *   LangGraph's `getConfig()` there reads the graph's config. The node itself keeps its context: what it
 *   runs may ask for it (`interrupt()`, a nested model's callbacks).
 * - **The `RunTree` LangChain builds for each call of a node** to carry its config, tracing or not:
 *   without a tracer, a stand-in carries it, which becomes that `RunTree` when anything else reads it
 *   (see `node-context.ts`). Only for a node's untraced `RunnableCallable`, whose `invoke` is its own.
 * - **The sequence of a node's task, built for every task**, and its callbacks' machinery where there
 *   are no callbacks (see {@link TaskSequence}).
 * - **The streams around `invoke`** (see {@link invokeDirectly}).
 * @internal
 */
export function leanGraph<T extends CompiledStateGraphLike>(compiled: T): T {
  /** `RunnableCallable`'s own `invoke`, read off a mapper LangGraph built. */
  let callableInvoke: unknown;
  for (const [name, node] of Object.entries(compiled.nodes)) {
    withoutCommandBranch(node, Object.keys(compiled.builder.branches[name] ?? {}).length);
    for (const entry of updateEntriesOf(node)) {
      if (typeof entry.value !== "object" || entry.value === null || !(PASSTHROUGH in entry.value)) continue;
      const mapper = entry.mapper as Partial<FunctionRunnable> | undefined;
      if (typeof mapper?.func !== "function" || mapper.trace !== false || mapper.recurse !== false) continue;
      callableInvoke ??= Object.getPrototypeOf(mapper).invoke;
      entry.mapper = plainRunnable("update-mapper", mapper.func);
    }
  }
  for (const node of Object.values(compiled.nodes)) {
    joinPlainWriters(node);
    if (callableInvoke === undefined) continue;
    for (const writer of node.writers) callDirectly(writer, callableInvoke);
    const bound = node.bound as Partial<FunctionRunnable> & { invoke?: unknown };
    if (bound.trace === false && bound.invoke === callableInvoke) {
      callWithLightContext(bound, callableInvoke as Parameters<typeof callWithLightContext>[1]);
    }
    buildTaskOnce(node);
  }
  invokeDirectly(compiled);
  return compiled;
}

/** What {@link invokeDirectly} reads of a compiled graph: LangGraph's `Pregel`. */
interface IteratedGraph {
  readonly config?: { readonly recursionLimit?: number | undefined } | undefined;
  readonly outputChannels: unknown;
  _streamIterator(input: unknown, options?: unknown): AsyncGenerator<unknown>;
}

/** The options of `invoke` the direct one reads; others are handed on as LangGraph's `invoke` would. */
type InvokeOptions = RunnableConfig & {
  readonly streamMode?: unknown;
  readonly subgraphs?: unknown;
  readonly outputKeys?: unknown;
};

/**
 * Gives the graph an `invoke` that reads the steps of LangGraph's own iterator as they come, where
 * LangGraph's `invoke` reads them through `stream`: that pipes each step through two web streams (the
 * runnable's and one to cancel it by) and runs each step of the iterator in a context of its own, set
 * up as for a runnable (a callback manager configured from the environment). The direct one sets that
 * context up once for the whole run and races it with the caller's signal once, as `stream` does for
 * each step; it reads the run's config as `stream` does (the task's, when a node invokes the graph as
 * its subgraph, but never the task's signal: the run has the caller's, or one of its own) and keeps the
 * last values and every interrupt, as LangGraph's `invoke` does. Only a
 * graph whose `invoke` is `Pregel`'s own gets it, and only a call in `values` mode (the default)
 * without `subgraphs` takes it; others run LangGraph's.
 */
function invokeDirectly(compiled: CompiledStateGraphLike): void {
  const graph = compiled as unknown as Partial<IteratedGraph> & { invoke?: unknown };
  const own = Pregel.prototype.invoke;
  if (graph.invoke !== own || typeof graph._streamIterator !== "function") return;
  const iterated = graph as IteratedGraph;
  Object.defineProperty(compiled, "invoke", {
    configurable: true,
    value: async (input: unknown, options?: InvokeOptions): Promise<unknown> => {
      const mode = options?.streamMode;
      if ((mode !== undefined && mode !== "values") || options?.subgraphs !== undefined) {
        return own.call(compiled as never, input as never, options as never);
      }
      return invokeIterated(iterated, input, options);
    },
  });
}

/** LangGraph's `invoke` in `values` mode, reading `_streamIterator` itself (see {@link invokeDirectly}). */
function invokeIterated(graph: IteratedGraph, input: unknown, options: InvokeOptions | undefined) {
  let given: InvokeOptions = {
    ...options,
    outputKeys: options?.outputKeys ?? graph.outputChannels,
    streamMode: "values",
    encoding: undefined,
  } as InvokeOptions;
  // A subgraph invoked by a node reads and writes under the node's task: its config goes on, as in `stream`.
  const ambient = getConfig()?.configurable;
  if (ambient?.__pregel_read !== undefined && given.configurable?.__pregel_read === undefined) {
    given = { ...given, configurable: { ...ambient, ...given.configurable } };
  }
  // A signal of its own where the caller gives none, as `stream` gives it: one read from the context
  // would be the task's, when a node invokes the graph, which a sibling task's failure aborts.
  const config = ensureConfig({
    recursionLimit: graph.config?.recursionLimit,
    ...given,
    signal: options?.signal ?? new AbortController().signal,
  });
  const run = async (): Promise<unknown> => {
    let latest: unknown;
    const interrupts: unknown[] = [];
    for await (const chunk of graph._streamIterator(input, config)) {
      if (isInterrupted(chunk)) interrupts.push(...chunk[INTERRUPT]);
      else latest = chunk;
    }
    if (interrupts.length === 0) return latest;
    if (latest === undefined || latest === null) return { [INTERRUPT]: interrupts };
    return typeof latest === "object" ? { ...latest, [INTERRUPT]: interrupts } : latest;
  };
  // The caller's signal, with its timeout where it gave one (LangChain's config joins the two).
  const signal = options?.signal !== undefined || options?.timeout !== undefined ? config.signal : undefined;
  return AsyncLocalStorageProviderSingleton.runWithConfig(
    pickRunnableConfigKeys(config),
    () => (signal === undefined ? run() : raceWithSignal(run(), signal)),
    true,
  );
}

/** A writer LangGraph builds: its untraced runnable around a function (`ChannelWrite`, a branch's run). */
interface WriterRunnable extends FunctionRunnable {
  /** A `ChannelWrite`'s entries. */
  writes?: unknown;
}

/**
 * Joins the plain writers (`ChannelWrite`s) at the end of the node's writers into the first of them, as
 * LangGraph does each time it builds the node's task (into a new writer, which would be called with its
 * own context), so that the one called directly below is the one that runs.
 */
function joinPlainWriters(node: PregelNode): void {
  const writers = node.writers as unknown as WriterRunnable[];
  for (;;) {
    const last = writers[writers.length - 1];
    const before = writers[writers.length - 2];
    if (last === undefined || before === undefined) return;
    if (!Array.isArray(last.writes) || !Array.isArray(before.writes)) return;
    if (Object.getPrototypeOf(last) !== Object.getPrototypeOf(before)) return;
    before.writes = [...before.writes, ...last.writes];
    writers.pop();
  }
}

/**
 * Calls a writer's function as it is: its `invoke` without the context LangGraph's runnable would set
 * up. Only where that `invoke` is `callableInvoke`, `RunnableCallable`'s own.
 */
function callDirectly(writer: unknown, callableInvoke: unknown): void {
  const runnable = writer as Partial<WriterRunnable> & { invoke?: unknown };
  const func = runnable.func;
  if (typeof func !== "function" || runnable.trace !== false || runnable.invoke !== callableInvoke) return;
  if (!Array.isArray(runnable.writes) && (writer as Runnable).getName() !== BRANCH_RUN) return;
  const recurse = runnable.recurse !== false;
  Object.defineProperty(writer, "invoke", {
    configurable: true,
    value: async (input: unknown, config?: RunnableConfig): Promise<unknown> => {
      const out = await func(input, config ?? {});
      return recurse && Runnable.isRunnable(out) ? out.invoke(input, config) : out;
    },
  });
}

/** The entries of the node's first writer, its state update's, when it is LangGraph's `ChannelWrite`. */
function updateEntriesOf(node: PregelNode): WriteEntry[] {
  const writes = (node.writers[0] as { writes?: unknown } | undefined)?.writes;
  return Array.isArray(writes) ? (writes as WriteEntry[]) : [];
}

function withoutCommandBranch(node: PregelNode, routes: number): void {
  if ((node.ends !== undefined && node.ends.length > 0) || node.isErrorHandler === true) return;
  const [update, branch] = node.writers;
  if (update === undefined || branch === undefined) return;
  if (!Array.isArray((update as { writes?: unknown }).writes) || branch.getName() !== BRANCH_RUN) return;
  if (node.writers.filter((writer) => writer.getName() === BRANCH_RUN).length !== routes + 1) return;
  node.writers.splice(1, 1);
}

/**
 * A node's task: its runnable, then its writers, as LangGraph's `RunnableSequence` runs them, built once
 * for the node instead of for each of its tasks (`PregelNode.getNode`). A task with callbacks (a tracer,
 * a handler of the caller's: LangGraph gives every task the run's, when the run has any) or a timeout
 * of its own runs as that sequence, and a trace shows the same runs. Without them the sequence only
 * configured callbacks to find none and copied the task's config for each step, so the steps get the
 * task's config (a copy each) without that work. Either way the node's step is raced with the task's signal, and a signal aborted
 * before the writers keeps them from running.
 */
class TaskSequence extends RunnableSequence {
  /** What a trace names it by: the sequence it stands for. */
  override get lc_id(): string[] {
    return [...this.lc_namespace, "RunnableSequence"];
  }

  override async invoke(input: unknown, options?: RunnableConfig): Promise<unknown> {
    if (options?.callbacks !== undefined || options?.timeout !== undefined)
      return super.invoke(input, options);
    const config: RunnableConfig = { ...options, runId: undefined };
    const { signal } = config;
    // Its parts as they are: `steps` would build an array of them for every task.
    let value = await raceWithSignal(this.first.invoke(input, { ...config }), signal);
    for (const step of this.middle) value = await raceWithSignal(step.invoke(value, { ...config }), signal);
    if (signal?.aborted === true) throw abortError(signal);
    return this.last.invoke(value, { ...config });
  }
}

/** What an aborted signal rejects with, as LangChain's sequence reads it from the signal. */
function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  return new Error(typeof reason === "string" ? reason : "Aborted");
}

/**
 * Has the node hand LangGraph one {@link TaskSequence} for all its tasks, where what it builds for a task
 * is LangGraph's `RunnableSequence` (its runnable with writers after it).
 */
function buildTaskOnce(node: PregelNode): void {
  const built = node.getNode();
  if (built === undefined || Object.getPrototypeOf(built) !== RunnableSequence.prototype) return;
  const { steps } = built as RunnableSequence;
  const [first] = steps;
  const last = steps[steps.length - 1];
  if (first === undefined || last === undefined || steps.length < 2) return;
  const task = new TaskSequence({
    first,
    middle: steps.slice(1, -1),
    last,
    omitSequenceTags: true,
    ...(node.tracePolicy === undefined ? {} : { tracePolicy: node.tracePolicy }),
  });
  Object.defineProperty(node, "getNode", { configurable: true, value: () => task });
}
