import type { Fence } from "@agboss/core/store";
import { type Expression, type Kysely, type RawBuilder, type SqlBool, sql } from "kysely";
import {
  FENCE_ASSERTED,
  FENCED,
  fenceArgs,
  runFenced,
  typed,
  unnest,
  withFence,
} from "../fenced-statement.js";
import { PreparedQuery } from "../prepared-query.js";
import type { AgbossDatabase } from "../schema/agboss-database.js";
import type { StoreDatabase } from "../write-transactions.js";
import { CHECKPOINT_COLUMNS, replaceCheckpoint } from "./checkpoint-queries.js";

type CheckpointKey = { thread_id: string; checkpoint_ns: string; checkpoint_id: string };

/** A checkpoint row as {@link CheckpointStatements.put} writes it. */
export interface CheckpointRow extends CheckpointKey {
  readonly parent_checkpoint_id: string | null;
  readonly type: string;
  readonly checkpoint: Uint8Array;
  readonly metadata_type: string;
  readonly metadata: Uint8Array;
  readonly channel_origins: string;
}

/** A channel value of the checkpoint being written. */
export interface BlobRow {
  readonly channel: string;
  readonly type: string;
  readonly value: Uint8Array | null;
}

/** A pending write of one task, as {@link CheckpointStatements.putWrites} writes it. */
export interface TaskWriteRow {
  readonly idx: number;
  readonly channel: string;
  readonly type: string;
  readonly value: Uint8Array;
}

/** Older channel values a checkpoint still points at: they survive the deletion of what it supersedes. */
export interface ReachedValue {
  readonly checkpoint_id: string;
  readonly channel: string;
}

type PutArgs = CheckpointRow & {
  key: string;
  epoch: number;
  blob_channels: string[];
  blob_types: string[];
  blob_values: (Uint8Array | null)[];
  reached_ids: string[];
  reached_channels: string[];
};

type WritesArgs = CheckpointKey & {
  key: string;
  epoch: number;
  task_id: string;
  task_path: string;
  keep_idx: number[];
  keep_channels: string[];
  keep_types: string[];
  keep_values: Uint8Array[];
  replace_idx: number[];
  replace_channels: string[];
  replace_types: string[];
  replace_values: Uint8Array[];
};

/**
 * The checkpointer's writes as single statements, for dialects with data-modifying `with` clauses
 * (`writableCtes`, Postgres). One statement locks the lease row for share when the fence still holds it
 * (the `fence` clause), writes only if it did, and says whether it did: a checkpoint, its channel values
 * and the deletion of what it supersedes, or a task's pending writes, each in one round trip, in
 * autocommit, instead of a transaction of five to eight. The rows of a kind travel as arrays
 * (`unnest`), so each statement has one shape whatever the count. Every statement is idempotent: an
 * upsert, an insert that keeps what is stored, or a delete, so a transient fault runs it again whole.
 * @internal
 */
export class CheckpointStatements {
  readonly #store: StoreDatabase;
  /** By fenced, then by whether superseded checkpoints are deleted. */
  readonly #put = new Map<string, PreparedQuery<PutArgs, { fenced: boolean }>>();
  readonly #writes = new Map<string, PreparedQuery<WritesArgs, { fenced: boolean }>>();

  constructor(store: StoreDatabase) {
    this.#store = store;
  }

  /**
   * Upserts the checkpoint and its channel values; with `reached`, also deletes every older checkpoint of
   * its thread and namespace, their pending writes, and the older channel values not in `reached`. Writes
   * nothing when the fence no longer holds the lease, and throws {@link LeaseLostError} then, or, sent
   * with the pass's next statement, fails that one (see `runFenced`).
   */
  async put(
    fence: Fence | undefined,
    row: CheckpointRow,
    blobs: readonly BlobRow[],
    reached: readonly ReachedValue[] | undefined,
    toldDone = false,
  ): Promise<void> {
    const prune = reached !== undefined;
    const fenced = fence !== undefined;
    const query = this.#variant(this.#put, `${fenced}/${prune}`, () => this.#buildPut(fenced, prune));
    const args: PutArgs = {
      ...row,
      ...fenceArgs(fence),
      blob_channels: blobs.map((blob) => blob.channel),
      blob_types: blobs.map((blob) => blob.type),
      blob_values: blobs.map((blob) => blob.value),
      reached_ids: (reached ?? []).map((value) => value.checkpoint_id),
      reached_channels: (reached ?? []).map((value) => value.channel),
    };
    await runFenced(this.#store, query, args, fence, {
      applied: true,
      toldDone,
      checked: () =>
        this.#variant(this.#put, `checked/${prune}`, () => this.#buildPut(false, prune, "silent")),
      asserted: () =>
        this.#variant(this.#put, `asserted/${prune}`, () => this.#buildPut(true, prune, "asserted")),
    });
  }

  /**
   * Writes one task's pending writes: `keeping` rows keep a row already stored under their key,
   * `replacing` rows (the special channels) replace it. Writes nothing when the fence no longer holds
   * the lease, and throws {@link LeaseLostError} then, or, sent with the pass's next statement, fails
   * that one (see `runFenced`).
   */
  async putWrites(
    fence: Fence | undefined,
    key: CheckpointKey & { task_id: string; task_path: string },
    keeping: readonly TaskWriteRow[],
    replacing: readonly TaskWriteRow[],
    toldDone = false,
  ): Promise<void> {
    const fenced = fence !== undefined;
    const query = this.#variant(this.#writes, String(fenced), () => this.#buildWrites(fenced));
    // One statement may not update a row twice: of two writes to the same special channel, the later wins.
    const last = new Map(replacing.map((row) => [row.idx, row]));
    const replaced = [...last.values()];
    const args: WritesArgs = {
      ...key,
      ...fenceArgs(fence),
      keep_idx: keeping.map((row) => row.idx),
      keep_channels: keeping.map((row) => row.channel),
      keep_types: keeping.map((row) => row.type),
      keep_values: keeping.map((row) => row.value),
      replace_idx: replaced.map((row) => row.idx),
      replace_channels: replaced.map((row) => row.channel),
      replace_types: replaced.map((row) => row.type),
      replace_values: replaced.map((row) => row.value),
    };
    await runFenced(this.#store, query, args, fence, {
      applied: true,
      toldDone,
      checked: () => this.#variant(this.#writes, "checked", () => this.#buildWrites(false, "silent")),
      asserted: () => this.#variant(this.#writes, "asserted", () => this.#buildWrites(true, "asserted")),
    });
  }

  /** The query `build` makes, compiled once under `name` in `cache`. */
  #variant<TKey, TArgs, TRow>(
    cache: Map<TKey, PreparedQuery<TArgs, TRow>>,
    name: TKey,
    build: () => PreparedQuery<TArgs, TRow>,
  ): PreparedQuery<TArgs, TRow> {
    let query = cache.get(name);
    if (query === undefined) {
      query = build();
      cache.set(name, query);
    }
    return query;
  }

  /** The statement, its end as `ending` says (see {@link endWith}). */
  #buildPut(
    fenced: boolean,
    prune: boolean,
    ending: Ending = "answered",
  ): PreparedQuery<PutArgs, { fenced: boolean }> {
    return new PreparedQuery<PutArgs, { fenced: boolean }>((slot) => {
      const text = (name: keyof PutArgs & string) => typed(slot(name), "text");
      const key = {
        thread_id: slot("thread_id"),
        checkpoint_ns: slot("checkpoint_ns"),
        checkpoint_id: slot("checkpoint_id"),
      };
      let query = withFence(this.#store, fenced, slot)
        .with("checkpoint", (qb) =>
          qb
            .insertInto("agboss_checkpoints")
            .columns(CHECKPOINT_COLUMNS)
            .expression(
              qb
                .selectNoFrom([
                  text("thread_id").as("thread_id"),
                  text("checkpoint_ns").as("checkpoint_ns"),
                  text("checkpoint_id").as("checkpoint_id"),
                  text("parent_checkpoint_id").as("parent_checkpoint_id"),
                  text("type").as("type"),
                  typed(slot("checkpoint"), "bytea").as("checkpoint"),
                  text("metadata_type").as("metadata_type"),
                  typed(slot("metadata"), "bytea").as("metadata"),
                  text("channel_origins").as("channel_origins"),
                ])
                .where(FENCED),
            )
            .onConflict(replaceCheckpoint),
        )
        .with("blobs", (qb) =>
          qb
            .insertInto("agboss_checkpoint_blobs")
            .columns(["thread_id", "checkpoint_ns", "checkpoint_id", "channel", "type", "value"])
            .expression(
              qb
                .selectFrom(
                  unnest<{ channel: string; type: string; value: Uint8Array | null }>(
                    [
                      [slot("blob_channels"), "text[]"],
                      [slot("blob_types"), "text[]"],
                      [slot("blob_values"), "bytea[]"],
                    ],
                    "channel, type, value",
                  ),
                )
                .select([
                  text("thread_id").as("thread_id"),
                  text("checkpoint_ns").as("checkpoint_ns"),
                  text("checkpoint_id").as("checkpoint_id"),
                  "u.channel",
                  "u.type",
                  "u.value",
                ])
                .where(FENCED),
            )
            .onConflict((oc) =>
              oc
                .columns(["thread_id", "checkpoint_ns", "checkpoint_id", "channel"])
                .doUpdateSet((eb) => ({ type: eb.ref("excluded.type"), value: eb.ref("excluded.value") })),
            ),
        );
      if (prune) {
        query = query
          .with("superseded", (qb) =>
            qb
              .deleteFrom("agboss_checkpoints")
              .where("thread_id", "=", key.thread_id)
              .where("checkpoint_ns", "=", key.checkpoint_ns)
              .where("checkpoint_id", "<", key.checkpoint_id)
              .where(FENCED),
          )
          .with("superseded_writes", (qb) =>
            qb
              .deleteFrom("agboss_checkpoint_writes")
              .where("thread_id", "=", key.thread_id)
              .where("checkpoint_ns", "=", key.checkpoint_ns)
              .where("checkpoint_id", "<", key.checkpoint_id)
              .where(FENCED),
          )
          .with("unreached", (qb) =>
            qb
              .deleteFrom("agboss_checkpoint_blobs")
              .where("thread_id", "=", key.thread_id)
              .where("checkpoint_ns", "=", key.checkpoint_ns)
              .where("checkpoint_id", "<", key.checkpoint_id)
              .where(
                sql<boolean>`(checkpoint_id, channel) not in (select * from unnest(${typed(slot("reached_ids"), "text[]")}, ${typed(slot("reached_channels"), "text[]")}))`,
              )
              .where(FENCED),
          ) as unknown as typeof query;
      }
      return endWith(ending, (end) => query.selectNoFrom(end.as("fenced")));
    });
  }

  /** The statement, its end as `ending` says (see {@link endWith}). */
  #buildWrites(fenced: boolean, ending: Ending = "answered"): PreparedQuery<WritesArgs, { fenced: boolean }> {
    return new PreparedQuery<WritesArgs, { fenced: boolean }>((slot) => {
      const text = (name: keyof WritesArgs & string) => typed(slot(name), "text");
      const rows = (db: Kysely<AgbossDatabase>, prefix: "keep" | "replace") =>
        db
          .selectFrom(
            unnest<{ idx: number; channel: string; type: string; value: Uint8Array }>(
              [
                [slot(`${prefix}_idx`), "integer[]"],
                [slot(`${prefix}_channels`), "text[]"],
                [slot(`${prefix}_types`), "text[]"],
                [slot(`${prefix}_values`), "bytea[]"],
              ],
              "idx, channel, type, value",
            ),
          )
          .select([
            text("thread_id").as("thread_id"),
            text("checkpoint_ns").as("checkpoint_ns"),
            text("checkpoint_id").as("checkpoint_id"),
            text("task_id").as("task_id"),
            "u.idx",
            "u.channel",
            "u.type",
            "u.value",
            text("task_path").as("task_path"),
          ])
          .where(FENCED);
      const columns = [
        "thread_id",
        "checkpoint_ns",
        "checkpoint_id",
        "task_id",
        "idx",
        "channel",
        "type",
        "value",
        "task_path",
      ] as const;
      const conflictKey = ["thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx"] as const;
      const writes = withFence(this.#store, fenced, slot)
        .with("kept", (qb) =>
          qb
            .insertInto("agboss_checkpoint_writes")
            .columns(columns)
            .expression(rows(qb as unknown as Kysely<AgbossDatabase>, "keep"))
            .onConflict((oc) => oc.columns(conflictKey).doNothing()),
        )
        .with("replaced", (qb) =>
          qb
            .insertInto("agboss_checkpoint_writes")
            .columns(columns)
            .expression(rows(qb as unknown as Kysely<AgbossDatabase>, "replace"))
            .onConflict((oc) =>
              oc.columns(conflictKey).doUpdateSet((eb) => ({
                channel: eb.ref("excluded.channel"),
                type: eb.ref("excluded.type"),
                value: eb.ref("excluded.value"),
                task_path: eb.ref("excluded.task_path"),
              })),
            ),
        );
      return endWith(ending, (end) => writes.selectNoFrom(end.as("fenced")));
    });
  }
}

/**
 * How a write statement ends: `answered`, a row saying whether its fence held (`fenced`); `silent`, no
 * row (a write sent without reading its result, its fence checked earlier in the transaction);
 * `asserted`, the server refusing the statement when its fence did not hold ({@link FENCE_ASSERTED}),
 * so it too can be sent without reading its result. Its `with` clauses run either way (Postgres runs
 * every data-modifying one to its end, whatever the statement reads of it).
 */
type Ending = "answered" | "silent" | "asserted";

function endWith<TSelect extends { where(expression: Expression<SqlBool>): TSelect }>(
  ending: Ending,
  select: (end: RawBuilder<boolean>) => TSelect,
): TSelect {
  const query = select(ending === "asserted" ? FENCE_ASSERTED : FENCED);
  return ending === "silent" ? query.where(sql<SqlBool>`false`) : query;
}
