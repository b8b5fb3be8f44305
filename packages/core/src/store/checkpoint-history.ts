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

/**
 * Where a pass asks the checkpointer to keep what one read found for the graph's next read of the same
 * checkpoint: a pass reads the latest checkpoint to decide what to resume, then LangGraph's `invoke`
 * reads it again. `getTuple` with a token under {@link KEEP_READ_CONFIG_KEY} keeps the latest
 * checkpoint's stored parts under that token; `getTuple` with the same token under
 * {@link KEPT_READ_CONFIG_KEY} takes them (once) instead of reading, unless the thread was written
 * since; a read that names both takes the one and keeps what it took under the other (the pass's first
 * read, taking a read begun ahead, see {@link ReadsAhead}). A checkpointer that keeps nothing reads
 * every time, which is always correct.
 */
export const KEEP_READ_CONFIG_KEY = "agboss_keep_read";

/** See {@link KEEP_READ_CONFIG_KEY}: the token of a kept read, for the next read to take. */
export const KEPT_READ_CONFIG_KEY = "agboss_kept_read";

/** The token a LangGraph config asks a read to keep its parts under, if any (see {@link KEEP_READ_CONFIG_KEY}). */
export function readToKeep(
  config: { configurable?: Record<string, unknown> } | undefined,
): string | undefined {
  const token = config?.configurable?.[KEEP_READ_CONFIG_KEY];
  return typeof token === "string" ? token : undefined;
}

/** The token of a kept read a LangGraph config asks a read to take, if any (see {@link KEEP_READ_CONFIG_KEY}). */
export function keptRead(config: { configurable?: Record<string, unknown> } | undefined): string | undefined {
  const token = config?.configurable?.[KEPT_READ_CONFIG_KEY];
  return typeof token === "string" ? token : undefined;
}

/**
 * Where a pass tells the checkpointer that its thread has no checkpoint yet: the start of an execution
 * on a new thread, under the thread's lease, which nobody held before. A read of the latest checkpoint of
 * the thread's root namespace with this set to `true` may answer none without reading. A checkpointer
 * that reads anyway is always correct.
 */
export const NO_CHECKPOINT_CONFIG_KEY = "agboss_no_checkpoint";

/**
 * Whether a LangGraph config says the read may answer none without reading (see
 * {@link NO_CHECKPOINT_CONFIG_KEY}): set, and a read of the latest checkpoint of the root namespace.
 */
export function knownToHaveNoCheckpoint(
  config: { configurable?: Record<string, unknown> } | undefined,
): boolean {
  const configurable = config?.configurable;
  return (
    configurable?.[NO_CHECKPOINT_CONFIG_KEY] === true &&
    (configurable.checkpoint_ns ?? "") === "" &&
    (configurable.checkpoint_id ?? undefined) === undefined
  );
}

/** A checkpointer that keeps reads (see {@link KEEP_READ_CONFIG_KEY}) and can drop one nobody will take. */
export interface KeepsReads {
  /** Drops the read kept under `token`, if it is still there. */
  forgetKeptRead(token: string): void;
}

/** Drops the read `checkpointer` keeps under `token`, where it keeps reads at all (see {@link KeepsReads}). */
export function forgetKeptRead(checkpointer: unknown, token: string): void {
  (checkpointer as Partial<KeepsReads>).forgetKeptRead?.(token);
}

/**
 * A read of a thread's latest checkpoint begun ahead of the pass that needs it (see {@link ReadsAhead}):
 * the pass's first read of the thread names `token` under {@link KEPT_READ_CONFIG_KEY} and takes what it
 * found, once `done` has settled. A read that failed, or that a write to the thread overtook, kept
 * nothing: the pass's read then reads, which is always correct.
 */
export interface ReadAhead {
  readonly token: string;
  /** Settles (never rejects) once the read has ended, kept or not. */
  readonly done: Promise<void>;
}

/**
 * A checkpointer that can begin reading a thread's latest checkpoint (root namespace) beside the unit
 * of work that just took the thread's lease, on a connection of its own, and keep it for the pass that
 * moves the thread next. The caller holds the lease from before the read begins, and its unit writes
 * none of the thread's checkpoints. It is only safe where the grant of a lease locks its row until the
 * unit ends and every fenced write locks that row for share: every fenced write that could change the
 * checkpoint has then either committed before the read begins or waits for the unit to end and meets a
 * newer epoch. `readAhead` answers undefined where that does not hold, or where nothing would be gained
 * (reads and writes share one connection): the pass then reads as usual.
 */
export interface ReadsAhead {
  readAhead(threadId: string): ReadAhead | undefined;
}

/** Begins a read ahead of `threadId`'s latest checkpoint where `checkpointer` offers one (see {@link ReadsAhead}). */
export function readAheadOf(checkpointer: unknown, threadId: string): ReadAhead | undefined {
  return (checkpointer as Partial<ReadsAhead>).readAhead?.(threadId);
}

/** Drops what `ahead` keeps once its read has ended, where nobody will take it (see {@link ReadsAhead}). */
export function forgetReadAhead(checkpointer: unknown, ahead: ReadAhead): void {
  void ahead.done.then(() => forgetKeptRead(checkpointer, ahead.token));
}
