import { type Compilable, type Insertable, type OnConflictBuilder, type Selectable, sql } from "kysely";
import { holdsLease } from "../fence-check.js";
import { PreparedQuery, type SlotOf } from "../prepared-query.js";
import type {
  AgbossDatabase,
  CheckpointBlobTable,
  CheckpointTable,
  CheckpointWriteTable,
} from "../schema/agboss-database.js";
import type { StoreDatabase } from "../write-transactions.js";

type CheckpointKey = { thread_id: string; checkpoint_ns: string; checkpoint_id: string };
type FenceSlots = { fenceKey: string; fenceEpoch: number };

/** The columns of a checkpoint's row, in the order its inserts name them. */
export const CHECKPOINT_COLUMNS = [
  "thread_id",
  "checkpoint_ns",
  "checkpoint_id",
  "parent_checkpoint_id",
  "type",
  "checkpoint",
  "metadata_type",
  "metadata",
  "channel_origins",
] as const;
type WriteRow = Insertable<CheckpointWriteTable>;

const WRITE_KEY = ["thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx"] as const;
const WRITE_COLUMNS = [...WRITE_KEY, "channel", "type", "value", "task_path"] as const;
/** Most rows one insert of pending writes carries (9 parameters each, well under any dialect's limit). */
export const WRITES_PER_INSERT = 100;

/** The checkpointer's fixed-shape statements, compiled once per store. @internal */
export class CheckpointQueries {
  readonly latest: PreparedQuery<Omit<CheckpointKey, "checkpoint_id">, Selectable<CheckpointTable>>;
  readonly byId: PreparedQuery<CheckpointKey, Selectable<CheckpointTable>>;
  readonly originsOf: PreparedQuery<CheckpointKey, { channel_origins: string }>;
  readonly upsertCheckpoint: PreparedQuery<Insertable<CheckpointTable>>;
  /**
   * {@link upsertCheckpoint} only while the lease row named `fenceKey` carries `fenceEpoch` (see
   * `FenceCheck.around`): where the transaction locks the whole database, the put's fence check.
   */
  readonly upsertFencedCheckpoint: PreparedQuery<Insertable<CheckpointTable> & FenceSlots>;
  readonly writesOf: PreparedQuery<CheckpointKey, Selectable<CheckpointWriteTable>>;
  /** Replaces a write with the same key: for the special channels (negative `idx`), the latest wins. */
  readonly upsertWrite: PreparedQuery<WriteRow>;
  /** Deletes every checkpoint of the key's thread and namespace older than the key's own (ids sort by creation). */
  readonly deleteOtherCheckpoints: PreparedQuery<CheckpointKey>;
  /**
   * Deletes the pending writes of every checkpoint of the key's thread and namespace older than the
   * key's own: a newer checkpoint's writes may land before the key's put does, and stay.
   */
  readonly deleteOtherWrites: PreparedQuery<CheckpointKey>;
  readonly #store: StoreDatabase;
  readonly #deleteUnreachedBlobs = new Map<number, PreparedQuery<Record<string, unknown>>>();
  readonly #insertWrites = new Map<number, PreparedQuery<Record<string, unknown>>>();
  readonly #upsertBlobs = new Map<number, PreparedQuery<Record<string, unknown>>>();
  readonly #blobsOf = new Map<
    number,
    PreparedQuery<Record<string, unknown>, Selectable<CheckpointBlobTable>>
  >();

  constructor(store: StoreDatabase) {
    this.#store = store;
    const db = store.db;
    this.latest = new PreparedQuery((slot) =>
      db
        .selectFrom("agboss_checkpoints")
        .selectAll()
        .where("thread_id", "=", slot("thread_id"))
        .where("checkpoint_ns", "=", slot("checkpoint_ns"))
        .orderBy("checkpoint_id", "desc")
        .limit(1),
    );
    this.byId = new PreparedQuery((slot) =>
      db
        .selectFrom("agboss_checkpoints")
        .selectAll()
        .where("thread_id", "=", slot("thread_id"))
        .where("checkpoint_ns", "=", slot("checkpoint_ns"))
        .where("checkpoint_id", "=", slot("checkpoint_id")),
    );
    this.originsOf = new PreparedQuery((slot) =>
      db
        .selectFrom("agboss_checkpoints")
        .select("channel_origins")
        .where("thread_id", "=", slot("thread_id"))
        .where("checkpoint_ns", "=", slot("checkpoint_ns"))
        .where("checkpoint_id", "=", slot("checkpoint_id")),
    );
    this.upsertCheckpoint = new PreparedQuery((slot) =>
      db
        .insertInto("agboss_checkpoints")
        .values({
          thread_id: slot("thread_id"),
          checkpoint_ns: slot("checkpoint_ns"),
          checkpoint_id: slot("checkpoint_id"),
          parent_checkpoint_id: slot("parent_checkpoint_id"),
          type: slot("type"),
          checkpoint: slot("checkpoint"),
          metadata_type: slot("metadata_type"),
          metadata: slot("metadata"),
          channel_origins: slot("channel_origins"),
        })
        .onConflict(replaceCheckpoint),
    );
    this.upsertFencedCheckpoint = new PreparedQuery((slot) =>
      db
        .insertInto("agboss_checkpoints")
        .columns(CHECKPOINT_COLUMNS)
        .expression(
          db
            .selectNoFrom(CHECKPOINT_COLUMNS.map((column) => sql`${slot(column)}`.as(column)))
            .where(holdsLease(slot)),
        )
        .onConflict(replaceCheckpoint),
    );
    this.writesOf = new PreparedQuery((slot) =>
      db
        .selectFrom("agboss_checkpoint_writes")
        .selectAll()
        .where("thread_id", "=", slot("thread_id"))
        .where("checkpoint_ns", "=", slot("checkpoint_ns"))
        .where("checkpoint_id", "=", slot("checkpoint_id")),
    );
    this.deleteOtherCheckpoints = new PreparedQuery((slot) =>
      db
        .deleteFrom("agboss_checkpoints")
        .where("thread_id", "=", slot("thread_id"))
        .where("checkpoint_ns", "=", slot("checkpoint_ns"))
        .where("checkpoint_id", "<", slot("checkpoint_id")),
    );
    this.deleteOtherWrites = new PreparedQuery((slot) =>
      db
        .deleteFrom("agboss_checkpoint_writes")
        .where("thread_id", "=", slot("thread_id"))
        .where("checkpoint_ns", "=", slot("checkpoint_ns"))
        .where("checkpoint_id", "<", slot("checkpoint_id")),
    );
    this.upsertWrite = new PreparedQuery((slot) =>
      db
        .insertInto("agboss_checkpoint_writes")
        .values(writeSlots(slot as (name: string) => unknown, ""))
        .onConflict((oc) =>
          oc.columns(WRITE_KEY).doUpdateSet((eb) => ({
            channel: eb.ref("excluded.channel"),
            type: eb.ref("excluded.type"),
            value: eb.ref("excluded.value"),
            task_path: eb.ref("excluded.task_path"),
          })),
        ),
    );
  }

  /**
   * Reads the channel values the thread and namespace of `key` keep under any of the checkpoint ids
   * `sources` (the checkpoints a checkpoint's values come from); the statement for each count of
   * `sources` is compiled the first time it is needed.
   */
  blobsOf(
    key: Omit<CheckpointKey, "checkpoint_id">,
    sources: readonly string[],
  ): {
    query: PreparedQuery<Record<string, unknown>, Selectable<CheckpointBlobTable>>;
    args: Record<string, unknown>;
  } {
    const query = compiledFor(this.#blobsOf, sources.length, (slot, count) =>
      this.#store.db
        .selectFrom("agboss_checkpoint_blobs")
        .selectAll()
        .where("thread_id", "=", slot("thread_id") as string)
        .where("checkpoint_ns", "=", slot("checkpoint_ns") as string)
        .where(
          "checkpoint_id",
          "in",
          Array.from({ length: count }, (_, i) => slot(`source${i}`) as string),
        ),
    );
    const args: Record<string, unknown> = { thread_id: key.thread_id, checkpoint_ns: key.checkpoint_ns };
    sources.forEach((source, i) => {
      args[`source${i}`] = source;
    });
    return { query, args };
  }

  /**
   * Inserts up to {@link WRITES_PER_INSERT} pending writes in one statement, keeping a row already stored
   * under the same key; the statement for each row count is compiled the first time it is needed.
   */
  insertWrites(rows: readonly WriteRow[]): {
    query: PreparedQuery<Record<string, unknown>>;
    args: Record<string, unknown>;
  } {
    const query = compiledFor(this.#insertWrites, rows.length, (slot, count) =>
      this.#store.db
        .insertInto("agboss_checkpoint_writes")
        .values(Array.from({ length: count }, (_, i) => writeSlots(slot, String(i))))
        .onConflict((oc) => oc.columns(WRITE_KEY).doNothing()),
    );
    const args: Record<string, unknown> = {};
    rows.forEach((row, i) => {
      for (const column of WRITE_COLUMNS) args[`${column}${i}`] = row[column];
    });
    return { query, args };
  }

  /**
   * Deletes the channel values of the key's thread and namespace that neither belong to the key's
   * checkpoint nor are one of `reached` (the values of older checkpoints it still points at), in one
   * statement; the statement for each count of `reached` is compiled the first time it is needed.
   */
  deleteUnreachedBlobs(
    key: CheckpointKey,
    reached: readonly { checkpoint_id: string; channel: string }[],
  ): { query: PreparedQuery<Record<string, unknown>>; args: Record<string, unknown> } {
    const query = compiledFor(this.#deleteUnreachedBlobs, reached.length, (slot, count) => {
      let q = this.#store.db
        .deleteFrom("agboss_checkpoint_blobs")
        .where("thread_id", "=", slot("thread_id") as string)
        .where("checkpoint_ns", "=", slot("checkpoint_ns") as string)
        .where("checkpoint_id", "<", slot("checkpoint_id") as string);
      if (count > 0) {
        q = q.where((eb) =>
          eb(
            eb.refTuple("checkpoint_id", "channel"),
            "not in",
            Array.from({ length: count }, (_, i) =>
              eb.tuple(slot(`reached_id${i}`) as string, slot(`reached_channel${i}`) as string),
            ),
          ),
        );
      }
      return q;
    });
    const args: Record<string, unknown> = { ...key };
    reached.forEach((row, i) => {
      args[`reached_id${i}`] = row.checkpoint_id;
      args[`reached_channel${i}`] = row.channel;
    });
    return { query, args };
  }

  /**
   * Upserts a checkpoint's channel values in one statement (a value written again under the same key replaces the first);
   * the statement for each row count is compiled the first time it is needed.
   */
  upsertBlobs(rows: readonly Insertable<CheckpointBlobTable>[]): {
    query: PreparedQuery<Record<string, unknown>>;
    args: Record<string, unknown>;
  } {
    const query = compiledFor(this.#upsertBlobs, rows.length, (slot, count) =>
      this.#store.db
        .insertInto("agboss_checkpoint_blobs")
        .values(
          Array.from({ length: count }, (_, i) => {
            const row: Record<string, unknown> = {};
            for (const column of BLOB_COLUMNS) row[column] = slot(`${column}${i}`);
            return row as unknown as Insertable<CheckpointBlobTable>;
          }),
        )
        .onConflict((oc) =>
          oc
            .columns(["thread_id", "checkpoint_ns", "checkpoint_id", "channel"])
            .doUpdateSet((eb) => ({ type: eb.ref("excluded.type"), value: eb.ref("excluded.value") })),
        ),
    );
    const args: Record<string, unknown> = {};
    rows.forEach((row, i) => {
      for (const column of BLOB_COLUMNS) args[`${column}${i}`] = row[column];
    });
    return { query, args };
  }
}

const BLOB_COLUMNS = ["thread_id", "checkpoint_ns", "checkpoint_id", "channel", "type", "value"] as const;
/** Most channel values one upsert carries (6 parameters each, well under any dialect's limit). */
export const BLOBS_PER_UPSERT = 100;

/**
 * `cache`'s statement for `count` rows or values, built by `build` and compiled the first time that count
 * is asked for: for the statements whose shape grows with what they carry (multi-row inserts, `in` lists).
 */
function compiledFor<TRow>(
  cache: Map<number, PreparedQuery<Record<string, unknown>, TRow>>,
  count: number,
  build: (slot: SlotOf<Record<string, unknown>>, count: number) => Compilable<unknown>,
): PreparedQuery<Record<string, unknown>, TRow> {
  let query = cache.get(count);
  if (query === undefined) {
    query = new PreparedQuery((slot) => build(slot, count));
    cache.set(count, query);
  }
  return query;
}

function writeSlots(slot: (name: string) => unknown, suffix: string): WriteRow {
  const row: Record<string, unknown> = {};
  for (const column of WRITE_COLUMNS) row[column] = slot(`${column}${suffix}`);
  return row as unknown as WriteRow;
}

/** On a checkpoint already stored under its key, every other column takes the new value. @internal */
export function replaceCheckpoint(oc: OnConflictBuilder<AgbossDatabase, "agboss_checkpoints">) {
  return oc.columns(["thread_id", "checkpoint_ns", "checkpoint_id"]).doUpdateSet((eb) => ({
    parent_checkpoint_id: eb.ref("excluded.parent_checkpoint_id"),
    type: eb.ref("excluded.type"),
    checkpoint: eb.ref("excluded.checkpoint"),
    metadata_type: eb.ref("excluded.metadata_type"),
    metadata: eb.ref("excluded.metadata"),
    channel_origins: eb.ref("excluded.channel_origins"),
  }));
}
