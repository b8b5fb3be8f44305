import { performance } from "node:perf_hooks";
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import type { CallTimings } from "./store-timing.js";

/** The row `--trace-store` adds to each side's breakdown. */
export const RUNNABLE_ROW = "langchain.runWithConfig";

/** Where the runnables started now are counted: the side whose execution runs, if any. */
let counting: CallTimings | undefined;
let installed = false;

/**
 * Counts, while `run` runs, each context LangChain sets up for a runnable, into `timings` (row
 * {@link RUNNABLE_ROW}): every node, writer, route and stream step LangGraph runs as it compiles them goes
 * through `AsyncLocalStorageProviderSingleton.runWithConfig`, which configures a callback manager
 * (reading environment variables) and builds a LangSmith `RunTree` with a random id before it calls the
 * runnable, even with tracing off. The time counted is that setup, up to the call, not the runnable's
 * own work. The sides take turns and never run at once, so whichever side's execution runs started
 * them. AGBoss's nodes carry their config in a stand-in instead (`graph/node-context.ts`): a node's
 * context is counted only when its `RunTree` gets built, when something reads more of it, and then with
 * that building's time.
 */
export async function countRunnables<T>(timings: CallTimings, run: () => Promise<T>): Promise<T> {
  install();
  counting = timings;
  try {
    return await run();
  } finally {
    counting = undefined;
  }
}

function install(): void {
  if (installed) return;
  installed = true;
  const provider = AsyncLocalStorageProviderSingleton;
  const original = provider.runWithConfig.bind(provider);
  provider.runWithConfig = <R>(config: unknown, callback: () => R, avoidCreatingRootRunTree?: boolean): R => {
    const timings = counting;
    if (timings === undefined) return original(config as never, callback, avoidCreatingRootRunTree);
    const began = performance.now();
    let counted = false;
    return original(
      config as never,
      () => {
        if (!counted) {
          counted = true;
          timings.add(RUNNABLE_ROW, performance.now() - began);
        }
        return callback();
      },
      avoidCreatingRootRunTree,
    );
  };
}
