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
      provider.runWithConfig = ((config: RunnableConfig, callback: () => unknown, avoid?: boolean) => {
        restore();
        return runWithLightContext(langchain, config, callback, avoid);
      }) as RunWithConfig;
      try {
        return callableInvoke.call(runnable, input, options);
      } finally {
        restore();
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
  // As LangChain decides it: a tracer with a run to go under gives the context its own `RunTree`.
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
  const storage = provider.getInstance();
  const outer = storage.getStore() as Slot;
  // The `RunTree` LangChain would have built here: set up again in the outer context, so that it reads
  // what it read there.
  const built = () =>
    storage.run(outer, () => langchain.call(provider, config, () => storage.getStore(), false) as object);
  return storage.run(standIn(config, built), callback);
}

/**
 * The stand-in: its `extra` holds the config, as the `RunTree`'s would; any other read, write or
 * inspection (its context variables included) is made on that `RunTree`, built then.
 */
function standIn(config: RunnableConfig, built: () => object): object {
  const extra = { [CONFIG_KEY]: config };
  let runTree: object | undefined;
  const real = (): object => {
    runTree ??= built();
    return runTree;
  };
  return new Proxy<object>(
    {},
    {
      get: (_, key) => {
        if (key === "extra" && runTree === undefined) return extra;
        const target = real();
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
      has: (_, key) => (key === "extra" && runTree === undefined) || Reflect.has(real(), key),
      set: (_, key, value) => Reflect.set(real(), key, value),
      deleteProperty: (_, key) => Reflect.deleteProperty(real(), key),
      defineProperty: (_, key, descriptor) => Reflect.defineProperty(real(), key, descriptor),
      ownKeys: () => Reflect.ownKeys(real()),
      getOwnPropertyDescriptor: (_, key) => Reflect.getOwnPropertyDescriptor(real(), key),
      getPrototypeOf: () => Reflect.getPrototypeOf(real()),
    },
  );
}
