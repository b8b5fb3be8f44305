import { StoreUnavailableError } from "@agboss/core";
import {
  type Fence,
  fenceOf,
  keepsLatestOnly,
  keptRead,
  knownToHaveNoCheckpoint,
  type ReadAhead,
  type ReadsAhead,
  readToKeep,
} from "@agboss/core/store";
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  compareWritesSortKeys,
  copyCheckpoint,
  getCheckpointId,
  maxChannelVersion,
  type PendingWrite,
  type SerializerProtocol,
  TASKS,
  WRITES_IDX_MAP,
  writesSortKey,
} from "@langchain/langgraph-checkpoint";
import type { Kysely, Selectable } from "kysely";
import { FenceCheck } from "../fence-check.js";
import type {
  AgbossDatabase,
  CheckpointBlobTable,
  CheckpointTable,
  CheckpointWriteTable,
} from "../schema/agboss-database.js";
import { fromJsonText, toBlob, toNumber } from "../schema/columns.js";
import {
  inAppliedWrite,
  inWriteTransaction,
  type StoreDatabase,
  type WriteOptions,
} from "../write-transactions.js";
import { BLOBS_PER_UPSERT, CheckpointQueries, WRITES_PER_INSERT } from "./checkpoint-queries.js";
import { type CheckpointParts, CheckpointRead } from "./checkpoint-read.js";
import {
  type BlobRow,
  type CheckpointRow,
  CheckpointStatements,
  type ReachedValue,
  type TaskWriteRow,
} from "./checkpoint-statements.js";

type RunnableConfig = Parameters<BaseCheckpointSaver["getTuple"]>[0];
type ChannelOrigins = Record<string, string>;

const EMPTY_CHANNEL = "empty";
/** How many checkpoints' channel origins a saver keeps in memory. */
const RECENT_ORIGINS = 1_000;
/** How many reads a saver keeps for a next read (see `KEEP_READ_CONFIG_KEY`) before it drops the oldest. */
const KEPT_READS = 64;

/**
 * How long a pass's latest checkpoint may wait in memory, with nothing else of the pass written, before
 * it is written on its own (see {@link HeldCheckpoint}): as long as a pass transaction lingers for the
 * pass's next write on a pool, so a long model call finds the checkpoint before it on its way to disk.
 */
const HOLD_MS = 4;
/** Most puts and writes one held checkpoint stands for before it is written anyway. */
const MAX_HELD = 32;

/** One task's pending writes, serialised, as {@link KyselyCheckpointSaver} stores them. */
interface TaskWrites {
  readonly key: {
    thread_id: string;
    checkpoint_ns: string;
    checkpoint_id: string;
    task_id: string;
    task_path: string;
  };
  readonly keeping: readonly TaskWriteRow[];
  readonly replacing: readonly TaskWriteRow[];
}

/**
 * What a pass wrote last to one thread and namespace under its fence and the store does not hold yet:
 * a checkpoint (with its values and what its put deletes) and the pending writes against it, or only
 * pending writes against a checkpoint stored before. A put that supersedes it drops it, carrying the
 * values it still points at, so a checkpoint put and superseded before the pass's next commit is
 * never written (its put would have deleted it in that same transaction). It is written, in order,
 * ahead of the pass's next write that is not a checkpoint's (see `WriteTransactions.holdBackFor`),
 * before a read of its thread, after {@link HOLD_MS} with nothing new, and when the store closes.
 */
interface HeldCheckpoint {
  readonly fence: Fence;
  readonly threadId: string;
  readonly namespace: string;
  /** The held checkpoint's id, or the stored one the held writes belong to. */
  readonly checkpointId: string;
  readonly put:
    | {
        readonly row: CheckpointRow;
        readonly blobs: readonly BlobRow[];
        readonly reached: readonly ReachedValue[] | undefined;
        readonly origins: ChannelOrigins;
      }
    | undefined;
  readonly writes: TaskWrites[];
  /** How many puts and writes it stands for (see {@link MAX_HELD}). */
  count: number;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/** Held writes taken out to be stored, until applied (see `#storing`). */
interface StoringEntry {
  readonly fence: Fence;
  readonly done: Promise<void>;
  /** The unit of work's transaction they were stored in; undefined when stored outside any. */
  readonly unit: unknown;
}

/** A latest checkpoint's stored parts, kept for the next read of its thread and namespace. */
interface KeptRead {
  readonly threadId: string;
  readonly namespace: string;
  readonly parts: CheckpointParts;
}

/**
 * A checkpoint's channel origins as its row stores them: a value of its own is named by an empty id,
 * not its 36-character id again.
 */
function storedOrigins(origins: ChannelOrigins, checkpointId: string): ChannelOrigins {
  const stored: ChannelOrigins = {};
  for (const [channel, origin] of Object.entries(origins))
    stored[channel] = origin === checkpointId ? "" : origin;
  return stored;
}

/** The channel origins a row stores, with the row's own id put back (rows written before name it in full). */
function originsOfRow(text: string, checkpointId: string): ChannelOrigins {
  const origins = fromJsonText(text) as ChannelOrigins;
  for (const [channel, origin] of Object.entries(origins)) if (origin === "") origins[channel] = checkpointId;
  return origins;
}

/** Pending writes in the order LangGraph applies them (by task path, task id, then index). */
function inWritesOrder(
  rows: readonly Selectable<CheckpointWriteTable>[],
): Selectable<CheckpointWriteTable>[] {
  const keyOf = (w: Selectable<CheckpointWriteTable>) =>
    writesSortKey(w.task_path, w.task_id, toNumber(w.idx));
  return [...rows].sort((a, b) => compareWritesSortKeys(keyOf(a), keyOf(b)));
}

/**
 * `work`, calling `failed` with its error before it rejects: so a write that fails tells whoever must
 * know before the write transaction runs its next unit.
 */
function failing<T>(
  failed: ((error: unknown) => void) | undefined,
  work: (trx: Kysely<AgbossDatabase>) => Promise<T>,
): (trx: Kysely<AgbossDatabase>) => Promise<T> {
  if (failed === undefined) return work;
  return async (trx) => {
    try {
      return await work(trx);
    } catch (error) {
      failed(error);
      throw error;
    }
  };
}

/**
 * `write`, calling `failed` with its error as it rejects (where the statement is the whole write and a
 * failed one aborts its transaction: nothing after it in the transaction can commit).
 */
function noting(write: Promise<void>, failed: ((error: unknown) => void) | undefined): Promise<void> {
  if (failed === undefined) return write;
  return write.catch((error: unknown) => {
    failed(error);
    throw error;
  });
}

/** Whether two fences are the same grant of the same lease. */
function sameFence(a: Fence, b: Fence | undefined): boolean {
  return b !== undefined && a.key === b.key && a.epoch === b.epoch;
}

function originsKey(threadId: string, namespace: string, checkpointId: string): string {
  return `${threadId}\u0000${namespace}\u0000${checkpointId}`;
}

/**
 * The LangGraph checkpointer on the store's database. A checkpoint row holds everything but its
 * channel values; each value is stored once, by the checkpoint whose `newVersions` changed it, and
 * later checkpoints point at that row, so forks never overwrite each other's values. A channel left
 * empty has no row: the checkpoint simply points nowhere for it.
 *
 * `put` and `putWrites` honour the fence under `config.configurable.agboss_fence`: in the same
 * transaction as the write they compare it with the lease row and throw `LeaseLostError` on a mismatch.
 *
 * A put whose config carries `agboss_checkpoint_history: "latest"` (`CHECKPOINT_HISTORY_CONFIG_KEY`; the
 * runtime's graphs do) also deletes, in its transaction, every older checkpoint of its thread and
 * namespace, their pending writes, and the channel values the new checkpoint no longer points at: the
 * thread's history is then its latest checkpoint alone (`list` returns one per namespace). Without it a
 * put keeps the full history, as LangGraph's own checkpointers do.
 */
export class KyselyCheckpointSaver extends BaseCheckpointSaver implements ReadsAhead {
  readonly #store: StoreDatabase;
  readonly #queries: CheckpointQueries;
  readonly #fence: FenceCheck;
  /** The writes as single statements, where the dialect has data-modifying `with` clauses. */
  readonly #statements: CheckpointStatements | undefined;
  /** Reads a checkpoint with its values and writes in one statement, where the dialect can. */
  readonly #read: CheckpointRead | undefined;
  /** Channel origins of recently written checkpoints, oldest first (see {@link #rememberOrigins}). */
  readonly #recentOrigins = new Map<string, ChannelOrigins>();
  /**
   * `putWrites` calls in flight, by thread and namespace. LangGraph does not wait for a step's pending
   * writes before it puts the next checkpoint; a put waits for those begun before it, so that the
   * writes it supersedes have landed when it deletes them (on a pool they could otherwise land just
   * after, and stay until the thread's next put).
   */
  readonly #writesInFlight = new Map<string, Set<Promise<void>>>();
  /** Reads kept for a next read, by token, oldest first (see `KEEP_READ_CONFIG_KEY`). */
  readonly #keptReads = new Map<string, KeptRead>();
  /** How many reads ahead this saver began (their tokens' numbers). */
  #readsAhead = 0;
  /** Reads in flight whose parts are to be kept: a write begun on their thread meanwhile overtakes them. */
  readonly #keeping = new Set<{ readonly threadId: string; overtaken: boolean }>();
  /** Writes begun and not yet settled, by thread: a read begun while one is in flight is not kept. */
  readonly #writing = new Map<string, number>();
  /** What a pass wrote last and the store does not hold yet, by thread, then namespace (see {@link HeldCheckpoint}). */
  readonly #held = new Map<string, Map<string, HeldCheckpoint>>();
  /**
   * Held entries taken out to be stored and not yet applied, by thread: a read of the thread waits for
   * them as for what is still held (a timer or another write may have begun storing them just before).
   */
  readonly #storing = new Map<string, Set<StoringEntry>>();

  constructor(store: StoreDatabase, serde?: SerializerProtocol) {
    super(serde);
    this.#store = store;
    this.#queries = new CheckpointQueries(store);
    this.#fence = new FenceCheck(store);
    this.#statements = store.capabilities.writableCtes ? new CheckpointStatements(store) : undefined;
    const entries = store.capabilities.jsonObjectEntries;
    this.#read = entries === undefined ? undefined : new CheckpointRead(store, entries);
    store.transactions?.holdBackFor((fence) => this.#storeHeldUnder(fence));
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId = config.configurable?.thread_id as string | undefined;
    if (threadId === undefined) return undefined;
    await this.#storeHeldOf(threadId, fenceOf(config));
    const namespace = (config.configurable?.checkpoint_ns as string | undefined) ?? "";
    const checkpointId = getCheckpointId(config) || undefined;
    if (checkpointId === undefined) {
      // A start on a new thread, under its lease: nothing to read (see `NO_CHECKPOINT_CONFIG_KEY`).
      if (knownToHaveNoCheckpoint(config)) return undefined;
      const kept = this.#takeKept(keptRead(config), threadId, namespace);
      if (kept !== undefined) {
        // Taken by a read that keeps its own for the next (a read ahead taken by the pass's first read):
        // nothing wrote the thread since, or the read would not have been there to take.
        const keep = readToKeep(config);
        if (keep !== undefined) this.#keep(keep, { threadId, namespace, parts: kept });
        return this.#toTuple(kept.row, kept);
      }
    }
    // Not kept inside a unit of work: it may not see what a pass holds back (see #storeHeldOf).
    const keep = checkpointId === undefined && !this.#inUnit() ? readToKeep(config) : undefined;
    const parts =
      keep === undefined
        ? await this.#readParts(threadId, namespace, checkpointId)
        : await this.#readAndKeep(threadId, namespace, keep);
    return parts === undefined ? undefined : this.#toTuple(parts.row, parts);
  }

  /** Reads the latest checkpoint's parts and keeps them under `token`, unless a write overtook the read. */
  async #readAndKeep(
    threadId: string,
    namespace: string,
    token: string,
  ): Promise<CheckpointParts | undefined> {
    // A write in flight may land after this read: what it reads is not kept.
    const reading = { threadId, overtaken: this.#writing.has(threadId) };
    this.#keeping.add(reading);
    let parts: CheckpointParts | undefined;
    try {
      parts = await this.#readParts(threadId, namespace, undefined);
    } finally {
      this.#keeping.delete(reading);
    }
    if (parts !== undefined && !reading.overtaken) this.#keep(token, { threadId, namespace, parts });
    return parts;
  }

  /** Keeps `read` under `token` for the next read that names it, dropping the oldest past {@link KEPT_READS}. */
  #keep(token: string, read: KeptRead): void {
    this.#keptReads.set(token, read);
    if (this.#keptReads.size > KEPT_READS) {
      this.#keptReads.delete(this.#keptReads.keys().next().value as string);
    }
  }

  /**
   * Begins reading the latest checkpoint of `threadId`'s root namespace, outside the caller's unit of
   * work, and keeps it for the read that names the token (see `ReadsAhead` in `@agboss/core/store`).
   * Only where transactions run side by side on a pool and a lease's grant locks its row, which fenced
   * writes lock for share (Postgres): on one connection the read would wait for the caller's unit and
   * gain nothing, and without the row lock a fenced write could commit between the read and the unit.
   * What it finds is kept as stored, not decoded: the read that takes it decodes it.
   */
  readAhead(threadId: string): ReadAhead | undefined {
    const transactions = this.#store.transactions;
    const { groupCommit, lockRowsForUpdate } = this.#store.capabilities;
    if (transactions === undefined || groupCommit || !lockRowsForUpdate) return undefined;
    // What this process holds of the thread is not in the store yet: the pass's own read stores it first.
    if (this.#held.has(threadId)) return undefined;
    const token = `ahead:${threadId}#${++this.#readsAhead}`;
    const done = transactions
      .outside(() => this.#readAndKeep(threadId, "", token))
      .then(
        () => undefined,
        // Nothing kept: the read that names the token reads for itself, and meets the fault if it lasts.
        () => undefined,
      );
    return { token, done };
  }

  /** The parts kept under `token` for this thread and namespace, taken (once); none after a write to the thread. */
  #takeKept(token: string | undefined, threadId: string, namespace: string): CheckpointParts | undefined {
    if (token === undefined) return undefined;
    const kept = this.#keptReads.get(token);
    if (kept === undefined || kept.threadId !== threadId || kept.namespace !== namespace) return undefined;
    this.#keptReads.delete(token);
    return kept.parts;
  }

  /**
   * Runs `write`, a write to `threadId`: as it begins, every read kept for the thread is forgotten and
   * any being read to keep is overtaken; until it settles, it counts as in flight (a read begun
   * meanwhile is not kept).
   */
  #writingTo<T>(threadId: string | undefined, write: () => Promise<T>): Promise<T> {
    if (threadId === undefined) return write();
    for (const reading of this.#keeping) if (reading.threadId === threadId) reading.overtaken = true;
    for (const [token, kept] of this.#keptReads) {
      if (kept.threadId === threadId) this.#keptReads.delete(token);
    }
    this.#writing.set(threadId, (this.#writing.get(threadId) ?? 0) + 1);
    const done = () => {
      const left = (this.#writing.get(threadId) ?? 1) - 1;
      if (left > 0) this.#writing.set(threadId, left);
      else this.#writing.delete(threadId);
    };
    const writing = write();
    writing.then(done, done);
    return writing;
  }

  /** Drops the read kept under `token` (a pass that will not take it); see `KEEP_READ_CONFIG_KEY`. */
  forgetKeptRead(token: string): void {
    this.#keptReads.delete(token);
  }

  /** A checkpoint (the latest, or `checkpointId`) with the values it points at and its pending writes. */
  async #readParts(
    threadId: string,
    namespace: string,
    checkpointId: string | undefined,
  ): Promise<CheckpointParts | undefined> {
    if (this.#read !== undefined) return this.#read.read(threadId, namespace, checkpointId);
    // A dialect that cannot turn the channel origins into rows: the checkpoint, its values, its writes.
    const db = this.#store.db;
    const row =
      checkpointId !== undefined
        ? await this.#queries.byId.first(db, {
            thread_id: threadId,
            checkpoint_ns: namespace,
            checkpoint_id: checkpointId,
          })
        : await this.#queries.latest.first(db, { thread_id: threadId, checkpoint_ns: namespace });
    if (row === undefined) return undefined;
    const blobs = await this.#blobsOf(row);
    const writes = await this.#orderedWrites(row.thread_id, row.checkpoint_ns, row.checkpoint_id);
    return { row, blobs, writes };
  }

  async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const { before, filter } = options;
    const threadId = config.configurable?.thread_id as string | undefined;
    const namespace = config.configurable?.checkpoint_ns as string | undefined;
    const checkpointId = config.configurable?.checkpoint_id as string | undefined;
    const beforeId = before?.configurable?.checkpoint_id as string | undefined;
    const filters = Object.entries(filter ?? {});
    let limit = options.limit;
    if (limit !== undefined && limit <= 0) return;
    // A listing of every thread inside a unit of work finds them as committed (see #storeHeldOf).
    if (threadId === undefined) {
      if (!this.#inUnit()) await this.storeAllHeld();
    } else await this.#storeHeldOf(threadId, fenceOf(config));

    let query = this.#store.db.selectFrom("agboss_checkpoints").selectAll();
    if (threadId !== undefined) query = query.where("thread_id", "=", threadId);
    if (namespace !== undefined) query = query.where("checkpoint_ns", "=", namespace);
    if (checkpointId) query = query.where("checkpoint_id", "=", checkpointId);
    if (beforeId) query = query.where("checkpoint_id", "<", beforeId);
    query = query.orderBy("checkpoint_id", "desc").orderBy("thread_id").orderBy("checkpoint_ns");
    if (limit !== undefined && filters.length === 0) query = query.limit(limit);

    for (const row of await query.execute()) {
      if (filters.length > 0) {
        const metadata = (await this.serde.loadsTyped(row.metadata_type, row.metadata)) as Record<
          string,
          unknown
        >;
        if (!filters.every(([key, value]) => metadata[key] === value)) continue;
      }
      yield await this.#toTuple(row);
      if (limit !== undefined && --limit <= 0) return;
    }
  }

  put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const threadId = config.configurable?.thread_id as string | undefined;
    return this.#writingTo(threadId, () => this.#put(config, checkpoint, metadata, newVersions));
  }

  async #put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const threadId = config.configurable?.thread_id as string | undefined;
    if (threadId === undefined) {
      throw new Error(
        'Cannot put a checkpoint: config.configurable has no "thread_id". Pass the thread\'s id.',
      );
    }
    const namespace = (config.configurable?.checkpoint_ns as string | undefined) ?? "";
    const earlierWrites = [...(this.#writesInFlight.get(originsKey(threadId, namespace, "")) ?? [])];
    const parentId = config.configurable?.checkpoint_id as string | undefined;
    const fence = fenceOf(config);

    // The id is the row's key and the values have rows of their own: neither is stored twice.
    const { channel_values: values, id: _id, ...rest } = copyCheckpoint(checkpoint);
    const [checkpointType, checkpointBytes] = await this.serde.dumpsTyped(rest);
    const [metadataType, metadataBytes] = await this.serde.dumpsTyped(metadata);
    const changed = Object.keys(newVersions);
    const blobs: BlobRow[] = await Promise.all(
      changed
        .filter((channel) => Object.hasOwn(values, channel))
        .map(async (channel) => {
          const [type, bytes] = await this.serde.dumpsTyped((values as Record<string, unknown>)[channel]);
          return { channel, type, value: toBlob(bytes) };
        }),
    );
    const latestOnly = keepsLatestOnly(config);
    // A pass's put (under its fence, keeping only the latest checkpoint) waits in memory for what
    // needs it stored; one inside a unit of work runs in it, as before.
    const holds = latestOnly && fence !== undefined && this.#holdsBack();
    const held = holds ? this.#held.get(threadId)?.get(namespace) : undefined;
    // What this put supersedes before it was stored (its parent, or the parent's pending writes): only
    // the values this one still points at are kept of it (see `HeldCheckpoint`).
    const superseded =
      held !== undefined &&
      parentId !== undefined &&
      sameFence(held.fence, fence) &&
      held.checkpointId === parentId
        ? held
        : undefined;

    // A checkpoint's origins never change once written, so they are read before the write, not in it.
    const origins: ChannelOrigins = parentId
      ? { ...(superseded?.put?.origins ?? (await this.#originsOf(threadId, namespace, parentId))) }
      : {};
    // A channel emptied by this checkpoint has no value to point at (reads skip it either way).
    for (const channel of changed) delete origins[channel];
    for (const { channel } of blobs) origins[channel] = checkpoint.id;
    if (superseded?.put !== undefined) {
      // Values the superseded checkpoint wrote and this one still points at become this one's own.
      for (const blob of superseded.put.blobs) {
        if (origins[blob.channel] !== superseded.checkpointId) continue;
        blobs.push(blob);
        origins[blob.channel] = checkpoint.id;
      }
    }
    const row: CheckpointRow = {
      thread_id: threadId,
      checkpoint_ns: namespace,
      checkpoint_id: checkpoint.id,
      parent_checkpoint_id: parentId ?? null,
      type: checkpointType,
      checkpoint: toBlob(checkpointBytes),
      metadata_type: metadataType,
      metadata: toBlob(metadataBytes),
      channel_origins: JSON.stringify(storedOrigins(origins, checkpoint.id)),
    };
    if (earlierWrites.length > 0) await Promise.allSettled(earlierWrites);
    // Looked up again: the writes waited for above may have stored or replaced what is held.
    const current = holds ? this.#held.get(threadId)?.get(namespace) : undefined;
    // Its put deletes what it supersedes, unless nothing older of its thread and namespace can be
    // stored: it has no parent, or it still replaces in memory a put that deleted nothing either (each
    // put since the thread's first was superseded before it was stored, as a new thread's pause's are).
    const deletesNothing =
      parentId === undefined ||
      (current !== undefined &&
        current === superseded &&
        current.put !== undefined &&
        current.put.reached === undefined);
    // The older values the checkpoint still points at, kept when what it supersedes is deleted.
    const reached =
      latestOnly && !deletesNothing
        ? Object.entries(origins)
            .filter(([, checkpointId]) => checkpointId !== checkpoint.id)
            .map(([channel, checkpointId]) => ({ channel, checkpoint_id: checkpointId }))
        : undefined;
    // Writes held for a checkpoint that was never put: a put with no parent is the first of its thread
    // and namespace, so the writes before it went to the graph's empty starting checkpoint (a command
    // that starts a new thread writes its update there). No read can reach them: they are dropped.
    const unborn =
      current !== undefined &&
      parentId === undefined &&
      current.put === undefined &&
      sameFence(current.fence, fence) &&
      current.checkpointId < checkpoint.id;
    if (holds && fence !== undefined) {
      if (current !== undefined && (current === superseded || unborn)) this.#drop(current);
      else if (current !== undefined) void this.#storeHeld(current);
      this.#hold({
        fence,
        threadId,
        namespace,
        checkpointId: checkpoint.id,
        put: { row, blobs, reached, origins },
        writes: [],
        count: (superseded?.count ?? 0) + 1,
        timer: undefined,
      });
    } else {
      await this.#storePut(fence, row, blobs, reached);
    }
    this.#rememberOrigins(threadId, namespace, checkpoint.id, origins);
    return { configurable: { thread_id: threadId, checkpoint_ns: namespace, checkpoint_id: checkpoint.id } };
  }

  /** Writes a checkpoint row, its values, and (with `reached`) deletes what it supersedes. */
  #storePut(
    fence: Fence | undefined,
    row: CheckpointRow,
    blobs: readonly BlobRow[],
    reached: readonly ReachedValue[] | undefined,
    failed?: (error: unknown) => void,
  ): Promise<void> {
    if (this.#statements !== undefined) {
      return noting(this.#statements.put(fence, row, blobs, reached, failed !== undefined), failed);
    }
    return this.#write(
      fence,
      failing(failed, async (trx) => {
        await this.#fence.around(trx, fence, async (fenced) => {
          if (fenced === undefined) return this.#queries.upsertCheckpoint.execute(trx, row);
          const args = { ...row, fenceKey: fenced.key, fenceEpoch: fenced.epoch };
          // An upsert writes its row whatever is stored: it writes nothing only when the fence failed.
          return (await this.#queries.upsertFencedCheckpoint.affected(trx, args)) > 0 ? true : undefined;
        });
        const rows = blobs.map((blob) => ({
          thread_id: row.thread_id,
          checkpoint_ns: row.checkpoint_ns,
          checkpoint_id: row.checkpoint_id,
          ...blob,
        }));
        for (let start = 0; start < rows.length; start += BLOBS_PER_UPSERT) {
          const { query, args } = this.#queries.upsertBlobs(rows.slice(start, start + BLOBS_PER_UPSERT));
          await query.execute(trx, args);
        }
        if (reached !== undefined) await this.#deleteSuperseded(trx, row, reached);
      }),
      // A held put (`failed` given): the graph was told it was done when it was put.
      { toldDone: failed !== undefined },
    );
  }

  putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath?: string,
  ): Promise<void> {
    const threadId = config.configurable?.thread_id as string | undefined;
    const namespace = (config.configurable?.checkpoint_ns as string | undefined) ?? "";
    const writing = this.#writingTo(threadId, () => this.#putWrites(config, writes, taskId, taskPath));
    if (threadId === undefined) return writing;
    const key = originsKey(threadId, namespace, "");
    let inFlight = this.#writesInFlight.get(key);
    if (inFlight === undefined) {
      inFlight = new Set();
      this.#writesInFlight.set(key, inFlight);
    }
    const tracked = inFlight;
    tracked.add(writing);
    const settle = () => {
      tracked.delete(writing);
      if (tracked.size === 0 && this.#writesInFlight.get(key) === tracked) this.#writesInFlight.delete(key);
    };
    writing.then(settle, settle);
    return writing;
  }

  async #putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath?: string,
  ): Promise<void> {
    const threadId = config.configurable?.thread_id as string | undefined;
    const checkpointId = config.configurable?.checkpoint_id as string | undefined;
    if (threadId === undefined) {
      throw new Error('Cannot put writes: config.configurable has no "thread_id". Pass the thread\'s id.');
    }
    if (checkpointId === undefined) {
      throw new Error(
        'Cannot put writes: config.configurable has no "checkpoint_id". Pass the config put returned.',
      );
    }
    const namespace = (config.configurable?.checkpoint_ns as string | undefined) ?? "";
    const fence = fenceOf(config);
    const rows = await Promise.all(
      writes.map(async ([channel, value], index) => {
        const [type, bytes] = await this.serde.dumpsTyped(value);
        return {
          thread_id: threadId,
          checkpoint_ns: namespace,
          checkpoint_id: checkpointId,
          task_id: taskId,
          idx: WRITES_IDX_MAP[channel] ?? index,
          channel,
          type,
          value: toBlob(bytes),
          task_path: taskPath ?? "",
        };
      }),
    );
    // Special channels (negative idx) replace what their task wrote before; the others keep the first.
    const replacing = rows.filter((row) => row.idx < 0);
    const keeping = rows.filter((row) => row.idx >= 0);
    const task: TaskWrites = {
      key: {
        thread_id: threadId,
        checkpoint_ns: namespace,
        checkpoint_id: checkpointId,
        task_id: taskId,
        task_path: taskPath ?? "",
      },
      keeping,
      replacing,
    };
    if (fence !== undefined && keepsLatestOnly(config) && this.#holdsBack()) {
      const held = this.#held.get(threadId)?.get(namespace);
      if (held !== undefined && sameFence(held.fence, fence)) {
        if (held.checkpointId === checkpointId) {
          held.writes.push(task);
          held.count += 1;
          if (held.count >= MAX_HELD) void this.#storeHeld(held);
          else this.#touch(held);
          return;
        }
        // Writes against a checkpoint the held one supersedes: its put deletes them, or that checkpoint
        // was never stored (its put then deletes nothing).
        if (held.put !== undefined && checkpointId < held.checkpointId) return;
      }
      if (held !== undefined) void this.#storeHeld(held);
      this.#hold({
        fence,
        threadId,
        namespace,
        checkpointId,
        put: undefined,
        writes: [task],
        count: 1,
        timer: undefined,
      });
      return;
    }
    await this.#storeWrites(fence, task);
  }

  /** Writes one task's pending writes. */
  #storeWrites(fence: Fence | undefined, task: TaskWrites, failed?: (error: unknown) => void): Promise<void> {
    const { key, keeping, replacing } = task;
    if (this.#statements !== undefined) {
      return noting(this.#statements.putWrites(fence, key, keeping, replacing, failed !== undefined), failed);
    }
    const rows = (list: readonly TaskWriteRow[]) => list.map((row) => ({ ...key, ...row }));
    // The fence check reads; each batch of kept writes and each replaced one is a statement.
    const statements = Math.ceil(keeping.length / WRITES_PER_INSERT) + replacing.length;
    return this.#write(
      fence,
      failing(failed, async (trx) => {
        await this.#fence.assert(trx, fence);
        const kept = rows(keeping);
        for (let start = 0; start < kept.length; start += WRITES_PER_INSERT) {
          const { query, args } = this.#queries.insertWrites(kept.slice(start, start + WRITES_PER_INSERT));
          await query.execute(trx, args);
        }
        for (const row of rows(replacing)) await this.#queries.upsertWrite.execute(trx, row);
      }),
      { oneWrite: statements <= 1, toldDone: failed !== undefined },
    );
  }

  /** Whether this saver holds a pass's writes back: where the store runs its write transactions, outside a unit of work. */
  #holdsBack(): boolean {
    return this.#store.transactions !== undefined && !this.#inUnit();
  }

  /** Whether the caller runs inside a unit of work (`store.atomically`). */
  #inUnit(): boolean {
    return this.#store.transactions?.current() !== undefined;
  }

  /** Holds `held` in place of what was held for its thread and namespace, and (re)starts its wait. */
  #hold(held: HeldCheckpoint): void {
    let namespaces = this.#held.get(held.threadId);
    if (namespaces === undefined) {
      namespaces = new Map();
      this.#held.set(held.threadId, namespaces);
    }
    namespaces.set(held.namespace, held);
    if (held.count >= MAX_HELD) void this.#storeHeld(held);
    else this.#touch(held);
  }

  /** (Re)starts the wait after which `held` is written on its own. */
  #touch(held: HeldCheckpoint): void {
    if (held.timer !== undefined) clearTimeout(held.timer);
    const transactions = this.#store.transactions;
    // Outside any unit of work the caller runs in: the write it makes is the pass's own.
    const start = () => setTimeout(() => void this.#storeHeld(held), HOLD_MS);
    held.timer = transactions === undefined ? start() : transactions.outside(start);
    held.timer.unref?.();
  }

  /** Forgets `held` without writing it. */
  #drop(held: HeldCheckpoint): void {
    if (held.timer !== undefined) clearTimeout(held.timer);
    held.timer = undefined;
    const namespaces = this.#held.get(held.threadId);
    if (namespaces?.get(held.namespace) !== held) return;
    namespaces.delete(held.namespace);
    if (namespaces.size === 0) this.#held.delete(held.threadId);
  }

  /**
   * Writes `held` now, unless it was written or dropped already: its checkpoint first, then its pending
   * writes in order, each queued at once so that they go ahead of whatever the caller writes next;
   * resolves once all are applied.
   */
  #storeHeld(held: HeldCheckpoint): Promise<void> {
    if (this.#held.get(held.threadId)?.get(held.namespace) !== held) return Promise.resolve();
    this.#drop(held);
    return this.#storeDropped([held]);
  }

  /**
   * Writes entries already taken out of {@link #held} (so a write they queue, which asks for what is
   * held under its fence first, finds none of them), in order. A failure, other than a transient fault
   * after which the store runs the write again, tells the store that the fence's writes are lost, from
   * within the failing write, before anything after it runs: the pass was told they were done.
   */
  #storeDropped(entries: readonly HeldCheckpoint[]): Promise<void> {
    const stored: Promise<void>[] = [];
    for (const { fence, threadId, put, writes } of entries) {
      const failed = (error: unknown) => {
        if (this.#store.capabilities.faultOf?.(error) === undefined) {
          this.#store.transactions?.loseFence(fence, error);
        }
      };
      const parts: Promise<void>[] = [];
      if (put !== undefined) parts.push(this.#storePut(fence, put.row, put.blobs, put.reached, failed));
      for (const task of writes) parts.push(this.#storeWrites(fence, task, failed));
      const entry: StoringEntry = {
        fence,
        done: Promise.all(parts).then(() => undefined),
        unit: this.#store.transactions?.current(),
      };
      let storing = this.#storing.get(threadId);
      if (storing === undefined) {
        storing = new Set();
        this.#storing.set(threadId, storing);
      }
      storing.add(entry);
      const settled = () => {
        storing.delete(entry);
        if (storing.size === 0 && this.#storing.get(threadId) === storing) this.#storing.delete(threadId);
      };
      entry.done.then(settled, settled);
      stored.push(entry.done);
    }
    const all = Promise.all(stored).then(() => undefined);
    // Whoever needs it awaits it; a failure meanwhile is already on the fence.
    all.catch(() => undefined);
    return all;
  }

  /** Takes every entry `pick` chooses out of {@link #held}, in the order they were held. */
  #dropAll(pick: (held: HeldCheckpoint) => boolean, threadId?: string): HeldCheckpoint[] {
    const threads = threadId === undefined ? [...this.#held.values()] : [this.#held.get(threadId)];
    const taken = threads.flatMap((namespaces) => [...(namespaces?.values() ?? [])]).filter(pick);
    for (const held of taken) this.#drop(held);
    return taken;
  }

  /** Writes what is held under `fence` (see `WriteTransactions.holdBackFor`); undefined when nothing is. */
  #storeHeldUnder(fence: Fence): Promise<void> | undefined {
    if (!this.#held.has(fence.key)) return undefined;
    const taken = this.#dropAll((held) => sameFence(held.fence, fence), fence.key);
    return taken.length === 0 ? undefined : this.#storeDropped(taken);
  }

  /**
   * Writes what is held of `threadId`, whoever holds it, before a read of it; settles once applied. A
   * read under `fence` (a pass's own) fails when what it held could not be stored, rather than find the
   * thread as it was before; what another holder held is its own affair. Inside a unit of work only what
   * the read's own fence holds: another holder's writes are its uncommitted writes, not the unit's to
   * commit or lose (stored there, a rollback of the unit would take them from under their pass, whose
   * later writes may already point at them), so the read finds the thread as committed; nor does it
   * wait for those being stored, which may be queued behind the unit itself.
   */
  async #storeHeldOf(threadId: string, fence: Fence | undefined): Promise<void> {
    const unit = this.#store.transactions?.current();
    const inUnit = unit !== undefined;
    if (fence !== undefined) {
      // A pass whose writes were lost (a unit that carried them rolled back, a commit that failed) reads
      // nothing more of its thread: what the store holds is older than what it was told was stored.
      this.#store.transactions?.refuseAfterLostCommit(fence);
      if (inUnit) this.#refuseOwnReadInUnit(threadId, fence, unit);
    }
    const ours = (entry: { readonly fence: Fence }) => !inUnit || sameFence(entry.fence, fence);
    if (this.#held.has(threadId)) {
      const taken = this.#dropAll(ours, threadId);
      if (taken.length > 0) void this.#storeDropped(taken);
    }
    const storing = this.#storing.get(threadId);
    if (storing === undefined) return;
    await Promise.all(
      [...storing]
        .filter(ours)
        .map((entry) => (sameFence(entry.fence, fence) ? entry.done : entry.done.catch(() => undefined))),
    );
  }

  /**
   * Refuses a pass's own read of its thread inside a unit of work while something it wrote waits to be
   * committed outside that unit: writes being stored on their own (the hold's timer, another write),
   * or, on a pool, applied in a pass transaction not yet committed. The unit cannot see them, nor wait for them
   * either: where commits are grouped they may be queued behind the unit itself, which would stall the
   * store, and elsewhere they are in a transaction of their own until it commits. What the pass still
   * holds is stored in the unit, as before; the runtime never reads a pass's thread inside a unit.
   */
  #refuseOwnReadInUnit(threadId: string, fence: Fence, unit: unknown): void {
    const outside = [...(this.#storing.get(threadId) ?? [])].some(
      (entry) => entry.unit !== unit && sameFence(entry.fence, fence),
    );
    // Applied and not yet committed: where commits are grouped, in the transaction the unit runs in too
    // (one connection, one group at a time), so the unit sees them; on a pool, in a pass transaction of
    // their own, which it does not.
    const pending =
      !this.#store.capabilities.groupCommit && this.#store.transactions?.pendingUnder(fence) === true;
    if (!outside && !pending) return;
    throw new StoreUnavailableError(
      `The checkpoint writes of "${fence.key}" (epoch ${fence.epoch}) are being committed outside this unit ` +
        "of work, which cannot see them: its read of the thread under that lease is refused. Read the " +
        "thread outside the unit, or run the unit again once they are committed.",
    );
  }

  /**
   * Writes everything held, whoever holds it, and settles once it is applied: before a listing of every
   * thread, and as the store closes.
   */
  async storeAllHeld(): Promise<void> {
    await this.#storeDropped(this.#dropAll(() => true)).catch(() => undefined);
  }

  /**
   * Runs a checkpoint write. A pass's writes (under its lease's fence) resolve once applied, before their
   * commit (see `WriteTransactions.applied`), as LangGraph's own writes run behind the graph's next step:
   * the next write joins the same commit, and a write the runtime waits for (the pause, its take, a kept
   * result, the execution's record) is committed only with them. Without a fence, once committed.
   */
  #write(
    fence: Fence | undefined,
    work: (trx: Kysely<AgbossDatabase>) => Promise<void>,
    options?: WriteOptions,
  ): Promise<void> {
    return fence === undefined
      ? inWriteTransaction(this.#store, work, undefined, options)
      : inAppliedWrite(this.#store, fence, work, options);
  }

  async deleteThread(threadId: string): Promise<void> {
    // What is held of the thread would be deleted with it. Its pass was told those writes were done: it
    // must not build on them, so its later writes are refused as after any lost commit.
    // The same for writes of it being stored right now: the delete runs after them and takes them too.
    const lost = new Error(`the thread "${threadId}" was deleted while its pass was writing it`);
    for (const held of [...(this.#held.get(threadId)?.values() ?? [])]) {
      this.#drop(held);
      this.#store.transactions?.loseFence(held.fence, lost);
    }
    for (const entry of this.#storing.get(threadId) ?? [])
      this.#store.transactions?.loseFence(entry.fence, lost);
    await this.#writingTo(threadId, () =>
      inWriteTransaction(this.#store, async (trx) => {
        await trx.deleteFrom("agboss_checkpoint_writes").where("thread_id", "=", threadId).execute();
        await trx.deleteFrom("agboss_checkpoint_blobs").where("thread_id", "=", threadId).execute();
        await trx.deleteFrom("agboss_checkpoints").where("thread_id", "=", threadId).execute();
      }),
    );
  }

  /**
   * Deletes what the checkpoint `kept` supersedes in its thread and namespace: every older checkpoint, the
   * pending writes stored against them, and every channel value `origins` (the kept checkpoint's) does not
   * point at. Each statement reads one (thread, namespace) range of its table's primary key. A put without a
   * parent skips this: nothing of its namespace precedes it.
   */
  async #deleteSuperseded(
    trx: Kysely<AgbossDatabase>,
    kept: { thread_id: string; checkpoint_ns: string; checkpoint_id: string },
    reached: readonly ReachedValue[],
  ): Promise<void> {
    const key = {
      thread_id: kept.thread_id,
      checkpoint_ns: kept.checkpoint_ns,
      checkpoint_id: kept.checkpoint_id,
    };
    await this.#queries.deleteOtherCheckpoints.execute(trx, key);
    await this.#queries.deleteOtherWrites.execute(trx, key);
    const { query, args } = this.#queries.deleteUnreachedBlobs(key, reached);
    await query.execute(trx, args);
  }

  /**
   * Keeps the channel origins of the checkpoints this saver wrote last: the next checkpoint of a thread
   * names its parent's origins, nearly always the one just written, and so skips reading them back.
   * A checkpoint's origins never change once written (a checkpoint id is written by one fenced holder).
   */
  #rememberOrigins(threadId: string, namespace: string, checkpointId: string, origins: ChannelOrigins): void {
    const key = originsKey(threadId, namespace, checkpointId);
    this.#recentOrigins.delete(key);
    this.#recentOrigins.set(key, origins);
    if (this.#recentOrigins.size > RECENT_ORIGINS) {
      const oldest = this.#recentOrigins.keys().next().value;
      if (oldest !== undefined) this.#recentOrigins.delete(oldest);
    }
  }

  async #originsOf(threadId: string, namespace: string, checkpointId: string): Promise<ChannelOrigins> {
    const remembered = this.#recentOrigins.get(originsKey(threadId, namespace, checkpointId));
    if (remembered !== undefined) return remembered;
    const row = await this.#queries.originsOf.first(this.#store.db, {
      thread_id: threadId,
      checkpoint_ns: namespace,
      checkpoint_id: checkpointId,
    });
    return row === undefined ? {} : originsOfRow(row.channel_origins, checkpointId);
  }

  /** The tuple of a checkpoint row; its values and writes read here unless `parts` has them already. */
  async #toTuple(
    row: Selectable<CheckpointTable>,
    parts?: Pick<CheckpointParts, "blobs" | "writes">,
  ): Promise<CheckpointTuple> {
    const checkpoint = (await this.serde.loadsTyped(row.type, row.checkpoint)) as Checkpoint;
    checkpoint.id ??= row.checkpoint_id;
    checkpoint.channel_values = await this.#channelValues(row, parts?.blobs);
    const parentId = row.parent_checkpoint_id ?? undefined;
    if (checkpoint.v < 4 && parentId !== undefined)
      await this.#migratePendingSends(checkpoint, row, parentId);
    const tuple: CheckpointTuple = {
      config: {
        configurable: {
          thread_id: row.thread_id,
          checkpoint_ns: row.checkpoint_ns,
          checkpoint_id: row.checkpoint_id,
        },
      },
      checkpoint,
      metadata: (await this.serde.loadsTyped(row.metadata_type, row.metadata)) as CheckpointMetadata,
      pendingWrites: await this.#pendingWrites(
        row.thread_id,
        row.checkpoint_ns,
        row.checkpoint_id,
        parts?.writes,
      ),
    };
    if (parentId !== undefined) {
      tuple.parentConfig = {
        configurable: { thread_id: row.thread_id, checkpoint_ns: row.checkpoint_ns, checkpoint_id: parentId },
      };
    }
    return tuple;
  }

  async #channelValues(
    row: Selectable<CheckpointTable>,
    given?: readonly Selectable<CheckpointBlobTable>[],
  ): Promise<Record<string, unknown>> {
    const origins = originsOfRow(row.channel_origins, row.checkpoint_id);
    const values: Record<string, unknown> = {};
    for (const blob of given ?? (await this.#blobsOf(row))) {
      if (origins[blob.channel] !== blob.checkpoint_id || blob.type === EMPTY_CHANNEL || blob.value === null)
        continue;
      values[blob.channel] = await this.serde.loadsTyped(blob.type, blob.value);
    }
    return values;
  }

  /** The channel value rows a checkpoint points at (and maybe a few it does not: the caller picks). */
  async #blobsOf(row: Selectable<CheckpointTable>): Promise<Selectable<CheckpointBlobTable>[]> {
    const origins = originsOfRow(row.channel_origins, row.checkpoint_id);
    const sources = [...new Set(Object.values(origins))];
    if (sources.length === 0) return [];
    const { query, args } = this.#queries.blobsOf(row, sources);
    return (await query.execute(this.#store.db, args)).rows;
  }

  async #orderedWrites(threadId: string, namespace: string, checkpointId: string) {
    const { rows } = await this.#queries.writesOf.execute(this.#store.db, {
      thread_id: threadId,
      checkpoint_ns: namespace,
      checkpoint_id: checkpointId,
    });
    return inWritesOrder(rows);
  }

  async #pendingWrites(
    threadId: string,
    namespace: string,
    checkpointId: string,
    given?: readonly Selectable<CheckpointWriteTable>[],
  ): Promise<CheckpointPendingWrite[]> {
    const rows =
      given === undefined
        ? await this.#orderedWrites(threadId, namespace, checkpointId)
        : inWritesOrder(given);
    return Promise.all(
      rows.map(
        async (w): Promise<CheckpointPendingWrite> => [
          w.task_id,
          w.channel,
          await this.serde.loadsTyped(w.type, w.value),
        ],
      ),
    );
  }

  async #migratePendingSends(checkpoint: Checkpoint, row: Selectable<CheckpointTable>, parentId: string) {
    const parentWrites = await this.#orderedWrites(row.thread_id, row.checkpoint_ns, parentId);
    const sends = await Promise.all(
      parentWrites.filter((w) => w.channel === TASKS).map((w) => this.serde.loadsTyped(w.type, w.value)),
    );
    const versions = Object.values(checkpoint.channel_versions);
    (checkpoint.channel_values as Record<string, unknown>)[TASKS] = sends;
    (checkpoint.channel_versions as Record<string, unknown>)[TASKS] =
      versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
  }
}
