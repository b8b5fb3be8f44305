import { FENCE_CONFIG_KEY } from "@agboss/core/store";

/**
 * Notes, from now on, whether each read of a checkpoint was the graph's own (in `invoke`, whose config
 * carries the lease's fence) or a read of the state (`getState`). Returns the list it fills, in order.
 */
export function watchingReads(checkpointer: object): ("invoke" | "state")[] {
  const saver = checkpointer as {
    getTuple(config: { configurable?: Record<string, unknown> }): Promise<unknown>;
  };
  const getTuple = saver.getTuple.bind(saver);
  const reads: ("invoke" | "state")[] = [];
  saver.getTuple = (config) => {
    reads.push(config.configurable?.[FENCE_CONFIG_KEY] === undefined ? "state" : "invoke");
    return getTuple(config);
  };
  return reads;
}
