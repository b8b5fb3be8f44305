/**
 * Where the runtime's graphs tell the checkpointer that they read only the latest checkpoint of each
 * thread and namespace: LangGraph's `config.configurable`. A checkpointer may then delete, in the same
 * transaction as a put, the checkpoints (with their pending writes and the channel values no longer
 * reached) that the put supersedes. Graphs run without it keep their full history.
 */
export const CHECKPOINT_HISTORY_CONFIG_KEY = "agboss_checkpoint_history";

/** What a graph's config may ask of the checkpointer under {@link CHECKPOINT_HISTORY_CONFIG_KEY}. */
export type CheckpointHistory = "latest" | "all";

/** Whether a LangGraph config asks for the latest checkpoint of each namespace only. */
export function keepsLatestOnly(config: { configurable?: Record<string, unknown> } | undefined): boolean {
  return config?.configurable?.[CHECKPOINT_HISTORY_CONFIG_KEY] === "latest";
}
