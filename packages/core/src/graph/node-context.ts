import { CallbackManager } from "@langchain/core/callbacks/manager";
import type { RunnableConfig } from "@langchain/core/runnables";
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";

// The context LangChain sets up around each node call carries the call's config in the slot of its
// async local storage, as the `extra` of a LangSmith `RunTree`: that is where `getConfig()` and
// `interrupt()` find it. Without a tracer LangChain still builds that `RunTree` (tracing off), and
// building one (thirty-odd fields, random ids, environment reads, the time) costs more than the rest
// of the call's setup. Here the slot holds a stand-in instead: it answers for the config, and the
// first time anything else reads it (a nested runnable asking whether tracing is on, LangSmith's
// `traceable`, a context variable), it becomes the `RunTree` LangChain would have built, by
// LangChain's own code, from where the call began.

/** Where LangChain keeps a call's config in the `RunTree` of its context (`getRunnableConfig`). */
const CONFIG_KEY = Symbol.for("lc:child_config");

type RunWithConfig = typeof AsyncLocalStorageProviderSingleton.runWithConfig;

/** What a context's slot holds, as far as this module reads it. */
type Slot = object | undefined;

/**
 * Gives `runnable` (LangGraph's `RunnableCallable` around a node's function, untraced) an `invoke` that
 * runs LangGraph's own `invoke` (`callableInvoke`), whose one call to LangChain's `runWithConfig` (made
 * before its first `await`) sets up the context with a stand-in for the `RunTree` (see above) when no
 * tracer takes part; with a tracer, LangChain's own. `runWithConfig` is swapped only for that
 * synchronous stretch, and put back before the node's function starts.
 * @internal
 */
export function callWithLightContext(
  runnable: object,
  callableInvoke: (this: unknown, input: unknown, options?: RunnableConfig) => Promise<unknown>,
): void {
  Object.defineProperty(runnable, "invoke", {
    configurable: true,
    value: (input: unknown, options?: RunnableConfig): Promise<unknown> => {
      const provider = AsyncLocalStorageProviderSingleton;
      const own = Object.getOwnPropertyDescriptor(provider, "runWithConfig");
      const langchain: RunWithConfig = provider.runWithConfig;
      const restore = () => {
        if (own === undefined) delete (provider as Partial<typeof provider>).runWithConfig;
        else Object.defineProperty(provider, "runWithConfig", own);
      };
      const light = ((config: RunnableConfig, callback: () => unknown, avoid?: boolean) => {
        restore();
        return runWithLightContext(langchain, config, callback, avoid);
      }) as RunWithConfig;
      provider.runWithConfig = light;
      try {
        return callableInvoke.call(runnable, input, options);
      } finally {
        // Not called (LangGraph's invoke failed first): put back, unless something replaced it since.
        if (provider.runWithConfig === light) restore();
      }
    },
  });
}

/** LangChain's `runWithConfig`, with a stand-in for the `RunTree` where no tracer takes part. */
function runWithLightContext<R>(
  langchain: RunWithConfig,
  config: RunnableConfig,
  callback: () => R,
  avoidCreatingRootRunTree: boolean | undefined,
): R {
  const provider = AsyncLocalStorageProviderSingleton;
  if (avoidCreatingRootRunTree === true) return langchain.call(provider, config, callback, true) as R;
  const storage = provider.getInstance();
  const outer = storage.getStore() as Slot;
  // As LangChain decides it: a tracer with a run to go under gives the context its own `RunTree`. The
  // run comes from the config's callbacks or from a `RunTree` of the outer context: without either
  // there is none, whatever the environment says, and the callbacks need not be configured to know.
  if (config?.callbacks !== undefined || outer !== undefined) {
    const manager = CallbackManager._configureSync(
      config?.callbacks,
      undefined,
      config?.tags,
      undefined,
      config?.metadata,
    );
    const traced =
      manager?.getParentRunId() !== undefined &&
      manager.handlers.some((handler) => handler?.name === "langchain_tracer");
    if (traced) return langchain.call(provider, config, callback, false) as R;
  }
  // The `RunTree` LangChain would have built here: set up again in the outer context, so that it reads
  // what it read there.
  const built = () =>
    storage.run(outer, () => langchain.call(provider, config, () => storage.getStore(), false) as object);
  return storage.run(standIn(config, built), callback);
}

/**
 * What a stand-in holds: the `extra` it answers with, how to build its `RunTree`, and that `RunTree` with
 * its bound methods once built. (The proxy's target, so that one handler serves every stand-in.)
 */
interface StandIn {
  readonly extra: Record<PropertyKey, unknown>;
  readonly build: () => object;
  runTree: object | undefined;
  methods: Map<PropertyKey, unknown> | undefined;
}

/**
 * The stand-in: its `extra` holds what the `RunTree`'s would (the config, and the empty metadata of a
 * `RunTree` built without any); any other read, write or inspection (its context variables included)
 * is made on that `RunTree`, built then, whose `extra` becomes this one, with what was written to it.
 */
function standIn(config: RunnableConfig, build: () => object): object {
  const state: StandIn = {
    extra: { metadata: {}, [CONFIG_KEY]: config },
    build,
    runTree: undefined,
    methods: undefined,
  };
  return new Proxy<StandIn>(state, STAND_IN);
}

/** The stand-in's `RunTree`, built on first need. */
function runTreeOf(state: StandIn): object {
  if (state.runTree === undefined) {
    const runTree = state.build();
    const { extra } = state;
    const theirs = Reflect.get(runTree, "extra") as Record<PropertyKey, unknown> | undefined;
    for (const key of Reflect.ownKeys(theirs ?? {})) if (!(key in extra)) extra[key] = theirs?.[key];
    Reflect.set(runTree, "extra", extra);
    state.runTree = runTree;
  }
  return state.runTree;
}

/**
 * Every stand-in's handler. A method of the `RunTree` is bound to it once, so that reading it twice
 * gives the same function; the stand-in cannot be frozen or given another prototype (its properties
 * are the `RunTree`'s).
 */
const STAND_IN: ProxyHandler<StandIn> = {
  get: (state, key) => {
    if (key === "extra" && state.runTree === undefined) return state.extra;
    const target = runTreeOf(state);
    const value: unknown = Reflect.get(target, key, target);
    if (typeof value !== "function" || key === "constructor" || Object.hasOwn(target, key)) return value;
    state.methods ??= new Map();
    let bound = state.methods.get(key);
    if (bound === undefined) {
      bound = value.bind(target);
      state.methods.set(key, bound);
    }
    return bound;
  },
  has: (state, key) => (key === "extra" && state.runTree === undefined) || Reflect.has(runTreeOf(state), key),
  set: (state, key, value) => {
    state.methods?.delete(key);
    return Reflect.set(runTreeOf(state), key, value);
  },
  deleteProperty: (state, key) => Reflect.deleteProperty(runTreeOf(state), key),
  defineProperty: (state, key, descriptor) => {
    state.methods?.delete(key);
    return Reflect.defineProperty(runTreeOf(state), key, descriptor);
  },
  ownKeys: (state) => Reflect.ownKeys(runTreeOf(state)),
  getOwnPropertyDescriptor: (state, key) => Reflect.getOwnPropertyDescriptor(runTreeOf(state), key),
  getPrototypeOf: (state) => Reflect.getPrototypeOf(runTreeOf(state)),
  setPrototypeOf: () => false,
  isExtensible: () => true,
  preventExtensions: () => false,
};
