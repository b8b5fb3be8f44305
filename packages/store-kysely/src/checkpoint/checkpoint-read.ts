import { type Kysely, type Selectable, sql } from "kysely";
import { PreparedQuery } from "../prepared-query.js";
import type {
  CheckpointBlobTable,
  CheckpointTable,
  CheckpointWriteTable,
} from "../schema/agboss-database.js";
import type { JsonObjectEntries } from "../store-dialect-capabilities.js";
import type { StoreDatabase } from "../write-transactions.js";

/** A checkpoint with its channel values and its pending writes, as {@link CheckpointRead} finds them. */
export interface CheckpointParts {
  readonly row: Selectable<CheckpointTable>;
  readonly blobs: readonly Selectable<CheckpointBlobTable>[];
  readonly writes: readonly Selectable<CheckpointWriteTable>[];
}

type ReadArgs = { thread_id: string; checkpoint_ns: string; checkpoint_id: string };

/** One row of a read: `part` 0 is the checkpoint, 1 a channel value it points at, 2 a pending write. */
interface PartRow {
  part: number;
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  type: string;
  value: Uint8Array | null;
  metadata_type: string | null;
  metadata: Uint8Array | null;
  channel_origins: string | null;
  channel: string | null;
  task_id: string | null;
  idx: number | string | null;
  task_path: string | null;
}

/**
 * Reads a checkpoint with the channel values it points at and its pending writes in one statement, on
 * any dialect that can turn a JSON object into rows (see `jsonObjectEntries`): one query where reading
 * them apart takes three (on Postgres, one round trip instead of three). A union of three parts: the
 * checkpoint; each channel of its `channel_origins` joined to the row holding its value (an empty origin
 * names the checkpoint itself); its pending writes. The joins are written as cross joins with their
 * conditions in `where`: SQLite then keeps the order they are written in (the checkpoint, its origins,
 * then the values' and writes' primary keys), where with inner joins it may scan a table first.
 * @internal
 */
export class CheckpointRead {
  readonly #store: StoreDatabase;
  readonly #entries: JsonObjectEntries;
  /** By whether a checkpoint id is asked for (else the latest). */
  readonly #queries = new Map<boolean, PreparedQuery<ReadArgs, PartRow>>();

  constructor(store: StoreDatabase, entries: JsonObjectEntries) {
    this.#store = store;
    this.#entries = entries;
  }

  /** The checkpoint named, or the latest of its thread and namespace; undefined when there is none. */
  async read(
    threadId: string,
    namespace: string,
    checkpointId: string | undefined,
  ): Promise<CheckpointParts | undefined> {
    const byId = checkpointId !== undefined;
    let query = this.#queries.get(byId);
    if (query === undefined) {
      query = this.#build(byId);
      this.#queries.set(byId, query);
    }
    const { rows } = await query.execute(this.#store.db, {
      thread_id: threadId,
      checkpoint_ns: namespace,
      checkpoint_id: checkpointId ?? "",
    });
    const key = { thread_id: threadId, checkpoint_ns: namespace };
    let row: Selectable<CheckpointTable> | undefined;
    const blobs: Selectable<CheckpointBlobTable>[] = [];
    const writes: Selectable<CheckpointWriteTable>[] = [];
    for (const part of rows) {
      const { checkpoint_id, type } = part;
      if (part.part === 0) {
        row = {
          ...key,
          checkpoint_id,
          parent_checkpoint_id: part.parent_checkpoint_id,
          type,
          checkpoint: part.value as Uint8Array,
          metadata_type: part.metadata_type as string,
          metadata: part.metadata as Uint8Array,
          channel_origins: part.channel_origins as string,
        };
      } else if (part.part === 1) {
        blobs.push({ ...key, checkpoint_id, channel: part.channel as string, type, value: part.value });
      } else {
        writes.push({
          ...key,
          checkpoint_id,
          task_id: part.task_id as string,
          idx: part.idx as number,
          channel: part.channel as string,
          type,
          value: part.value as Uint8Array,
          task_path: part.task_path as string,
        });
      }
    }
    return row === undefined ? undefined : { row, blobs, writes };
  }

  #build(byId: boolean): PreparedQuery<ReadArgs, PartRow> {
    // Untyped: the statement reads its own `c` clause; every table it names goes through kysely, which
    // puts the store's schema before it.
    // biome-ignore lint/suspicious/noExplicitAny: the `c` clause is not a table of the schema's types
    const db = this.#store.db as unknown as Kysely<any>;
    const blobType = this.#store.capabilities.blobType;
    // A null of the column's type, so every branch of the union agrees on it (Postgres asks; SQLite takes it).
    const none = (type: "text" | "integer" | "blob") =>
      sql.raw(`cast(null as ${type === "blob" ? blobType : type})`);
    // Each channel the checkpoint points at, as rows of `key` (the channel) and `value` (its origin).
    const origins =
      this.#entries === "jsonb_each_text"
        ? sql`jsonb_each_text(c.channel_origins::jsonb)`.as("o")
        : sql`json_each(c.channel_origins)`.as("o");
    return new PreparedQuery<ReadArgs, PartRow>((slot) => {
      // Named as text in the branches of the union, where kysely would take it for a table of the schema.
      const C = sql`c`.as("c");
      const withOrigins =
        this.#entries === "jsonb_each_text"
          ? db.selectFrom(C).crossJoinLateral(origins)
          : // A table-valued function in a join may name the tables before it: no `lateral` needed.
            db.selectFrom(C).crossJoin(origins);
      return db
        .with(
          (cte) => cte("c").materialized(),
          (qb) => {
            let latest = qb
              .selectFrom("agboss_checkpoints")
              .selectAll()
              .where("thread_id", "=", slot("thread_id"))
              .where("checkpoint_ns", "=", slot("checkpoint_ns"));
            if (byId) latest = latest.where("checkpoint_id", "=", slot("checkpoint_id"));
            return latest.orderBy("checkpoint_id", "desc").limit(1);
          },
        )
        .selectFrom("c")
        .select([
          sql<number>`0`.as("part"),
          "c.checkpoint_id",
          "c.parent_checkpoint_id",
          "c.type",
          sql`c.checkpoint`.as("value"),
          "c.metadata_type",
          "c.metadata",
          "c.channel_origins",
          none("text").as("channel"),
          none("text").as("task_id"),
          none("integer").as("idx"),
          none("text").as("task_path"),
        ])
        .unionAll(
          withOrigins
            .crossJoin("agboss_checkpoint_blobs as b")
            .whereRef("b.thread_id", "=", "c.thread_id")
            .whereRef("b.checkpoint_ns", "=", "c.checkpoint_ns")
            .whereRef("b.channel", "=", "o.key")
            .where(
              sql<boolean>`b.checkpoint_id = case when o.value = '' then c.checkpoint_id else o.value end`,
            )
            .select([
              sql<number>`1`.as("part"),
              "b.checkpoint_id",
              none("text").as("parent_checkpoint_id"),
              "b.type",
              "b.value",
              none("text").as("metadata_type"),
              none("blob").as("metadata"),
              none("text").as("channel_origins"),
              "b.channel",
              none("text").as("task_id"),
              none("integer").as("idx"),
              none("text").as("task_path"),
            ]),
        )
        .unionAll(
          db
            .selectFrom(C)
            .crossJoin("agboss_checkpoint_writes as w")
            .whereRef("w.thread_id", "=", "c.thread_id")
            .whereRef("w.checkpoint_ns", "=", "c.checkpoint_ns")
            .whereRef("w.checkpoint_id", "=", "c.checkpoint_id")
            .select([
              sql<number>`2`.as("part"),
              "w.checkpoint_id",
              none("text").as("parent_checkpoint_id"),
              "w.type",
              "w.value",
              none("text").as("metadata_type"),
              none("blob").as("metadata"),
              none("text").as("channel_origins"),
              "w.channel",
              "w.task_id",
              "w.idx",
              "w.task_path",
            ]),
        );
    });
  }
}
