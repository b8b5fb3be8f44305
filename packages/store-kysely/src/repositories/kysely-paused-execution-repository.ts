import { LeaseLostError, type PauseAnswerer, PauseResolution, PauseStatus } from "@agboss/core";
import type {
  Fence,
  PauseAnswer,
  PauseDeadline,
  PausedExecutionRepository,
  PauseQuery,
  PauseRecord,
  ToolResult,
} from "@agboss/core/store";
import {
  type Kysely,
  type Selectable,
  sql,
  type Updateable,
  type UpdateQueryBuilder,
  type UpdateResult,
} from "kysely";
import { FenceCheck, holdsLease } from "../fence-check.js";
import { FENCED, type FenceArgs, fenceArgs, typed, withFence } from "../fenced-statement.js";
import { PreparedQuery } from "../prepared-query.js";
import type { AgbossDatabase, PauseTable } from "../schema/agboss-database.js";
import { fromJsonText, toJsonText, toMillis, toNumber, toOptionalMillis } from "../schema/columns.js";
import {
  inAppliedWrite,
  inWriteOnce,
  inWriteStatement,
  inWriteTransaction,
  type StoreDatabase,
} from "../write-transactions.js";

type UpdatedColumn = keyof Updateable<PauseTable> & string;

/** A fenced update's one row: whether the fence held, and the updated pause's columns (null if none). */
type FencedUpdateRow = { fenced: boolean } & {
  [K in keyof Selectable<PauseTable>]: Selectable<PauseTable>[K] | null;
};

/** The equality filters of a pause query beyond its tenant and statuses, and the column each reads. */
const LIST_COLUMNS = {
  channel: "channel",
  threadId: "thread_id",
  ownerId: "owner_id",
  rootExecutionId: "root_execution_id",
} as const;
const LIST_FILTERS = Object.keys(LIST_COLUMNS) as (keyof typeof LIST_COLUMNS)[];
/** How many statuses a pause can be in: a list asks for at most this many distinct ones that match. */
const STATUS_COUNT = Object.keys(PauseStatus).length;
/** How many resolved pauses retention removes per transaction. */
const RETENTION_BATCH = 1_000;

/**
 * {@link PausedExecutionRepository} on kysely. Each status change is one `update … where status = ?`
 * whose affected row count (or `returning`) decides which of two racing callers won; a fenced write
 * checks the lease in the same transaction first.
 */
export class KyselyPausedExecutionRepository implements PausedExecutionRepository {
  readonly #store: StoreDatabase;
  /** `list`'s queries, one per shape of filters (see {@link #listOf}). */
  readonly #lists = new Map<string, PreparedQuery<Record<string, unknown>, Selectable<PauseTable>>>();
  readonly #fence: FenceCheck;
  /** Inserts a pause unless one has its idempotency key; where the dialect has `returning`, answers the row it wrote. */
  readonly #insert: PreparedQuery<ReturnType<typeof toRow>, Selectable<PauseTable>>;
  /** The same under a fence as one statement (dialects with `writableCtes`), answering the stored pause. */
  readonly #fencedInsert: PreparedQuery<ReturnType<typeof toRow> & FenceArgs, FencedUpdateRow> | undefined;
  readonly #byIdempotencyKey: PreparedQuery<{ tenantId: string; key: string }, Selectable<PauseTable>>;
  readonly #byPauseId: PreparedQuery<{ tenantId: string; pauseId: string }, Selectable<PauseTable>>;
  readonly #resolvedBefore: PreparedQuery<
    { status: PauseStatus; before: number; limit: number },
    Selectable<PauseTable>
  >;
  /** The conditional updates, one per set of changed columns, compiled the first time each runs. */
  readonly #updates = new Map<string, PreparedQuery<Record<string, unknown>, Selectable<PauseTable>>>();
  /** The same as one fenced statement each (dialects with `writableCtes`), compiled the first time. */
  readonly #fencedUpdates = new Map<string, PreparedQuery<Record<string, unknown>, FencedUpdateRow>>();

  constructor(store: StoreDatabase) {
    this.#store = store;
    this.#fence = new FenceCheck(store);
    const db = store.db;
    this.#insert = new PreparedQuery((slot) => {
      const insert = db
        .insertInto("agboss_pauses")
        .values(Object.fromEntries(PAUSE_COLUMNS.map((column) => [column, slot(column)])) as never)
        .onConflict((oc) => oc.columns(["tenant_id", "idempotency_key"]).doNothing());
      return store.capabilities.supportsReturning ? insert.returningAll() : insert;
    });
    this.#fencedInsert = store.capabilities.writableCtes
      ? new PreparedQuery((slot) =>
          withFence(store, true, slot)
            .with("inserted", (qb) =>
              qb
                .insertInto("agboss_pauses")
                .columns(PAUSE_COLUMNS)
                .expression(
                  qb
                    .selectNoFrom(
                      PAUSE_COLUMNS.map((column) =>
                        typed(slot(column), PAUSE_COLUMN_TYPES[column]).as(column),
                      ),
                    )
                    .where(FENCED),
                )
                .onConflict((oc) => oc.columns(["tenant_id", "idempotency_key"]).doNothing())
                .returningAll(),
            )
            // The pause written, or the one stored with its key (the statement's snapshot does not hold
            // the row it inserts, so the two never both answer).
            .with("stored", (qb) =>
              qb
                .selectFrom("inserted")
                .selectAll()
                .unionAll(
                  qb
                    .selectFrom("agboss_pauses")
                    .selectAll()
                    .where("tenant_id", "=", slot("tenant_id"))
                    .where("idempotency_key", "=", slot("idempotency_key"))
                    .where(sql<boolean>`not exists (select 1 from inserted)`),
                ),
            )
            .selectFrom(sql<{ fenced: boolean }>`(select ${FENCED} as fenced)`.as("f"))
            .leftJoin("stored", (join) => join.onTrue())
            .selectAll("stored")
            .select(sql<boolean>`f.fenced`.as("fenced")),
        )
      : undefined;
    this.#byIdempotencyKey = new PreparedQuery((slot) =>
      db
        .selectFrom("agboss_pauses")
        .selectAll()
        .where("tenant_id", "=", slot("tenantId"))
        .where("idempotency_key", "=", slot("key")),
    );
    this.#byPauseId = new PreparedQuery((slot) =>
      db
        .selectFrom("agboss_pauses")
        .selectAll()
        .where("tenant_id", "=", slot("tenantId"))
        .where("pause_id", "=", slot("pauseId")),
    );
    // Served by agboss_pauses_resolved_idx (status, resolved_at, tenant_id, pause_id; only pauses with a
    // resolved_at, which `resolved_at < ?` implies): a range scan in index order that stops at the
    // limit, whatever else the table holds.
    this.#resolvedBefore = new PreparedQuery((slot) =>
      db
        .selectFrom("agboss_pauses")
        .selectAll()
        .where("status", "=", slot("status"))
        .where("resolved_at", "<", slot("before"))
        .orderBy("resolved_at", "asc")
        .orderBy("tenant_id", "asc")
        .orderBy("pause_id", "asc")
        .limit(slot("limit")),
    );
  }

  findOrCreate(record: PauseRecord, fence?: Fence): Promise<PauseRecord> {
    const row = toRow(record);
    const fencedInsert = this.#fencedInsert;
    if (fence !== undefined && fencedInsert !== undefined) {
      // One idempotent statement (it keeps the pause stored with the key): after a pass's checkpoint
      // writes it closes their transaction and carries its commit where the dialect can.
      return inWriteStatement(
        this.#store,
        async (db) => {
          // Asked on every run: a pass of this fence may have been lost while the write waited or failed.
          this.#store.transactions?.refuseAfterLostCommit(fence);
          const noted = this.#store.transactions?.fenceChecked(db, fence);
          const stored = await fencedInsert.first(db, { ...row, ...fenceArgs(fence) });
          if (stored?.fenced !== true) throw new LeaseLostError(fence);
          if (typeof noted === "function") noted();
          if (stored.pause_id !== null) return toPause(stored as Selectable<PauseTable>);
          // Another writer's pause with the key committed while the insert waited for it: the
          // statement's snapshot predates it, a read of its own does not.
          const other = await this.#byIdempotencyKey.first(db, {
            tenantId: record.tenantId,
            key: record.idempotencyKey,
          });
          if (other === undefined) throw new Error(`The pause "${record.pauseId}" was not stored.`);
          return toPause(other);
        },
        fence,
      );
    }
    return inWriteTransaction(
      this.#store,
      async (trx) => {
        await this.#fence.assert(trx, fence);
        // The row written, where the dialect answers it; else (or when one with the key was there) read.
        const stored =
          (await this.#insert.first(trx, row)) ??
          (await this.#byIdempotencyKey.first(trx, {
            tenantId: record.tenantId,
            key: record.idempotencyKey,
          }));
        if (stored === undefined) throw new Error(`The pause "${record.pauseId}" was not stored.`);
        return toPause(stored);
      },
      fence,
      // With `returning` the insert is its one write: the read after it runs only when it wrote nothing.
      { oneWrite: this.#store.capabilities.supportsReturning },
    );
  }

  async findByTenantIdAndPauseId(tenantId: string, pauseId: string): Promise<PauseRecord | undefined> {
    const row = await this.#byPauseId.first(this.#store.db, { tenantId, pauseId });
    return row === undefined ? undefined : toPause(row);
  }

  async findByTenantIdAndIdempotencyKey(
    tenantId: string,
    idempotencyKey: string,
  ): Promise<PauseRecord | undefined> {
    const row = await this.#byIdempotencyKey.first(this.#store.db, { tenantId, key: idempotencyKey });
    return row === undefined ? undefined : toPause(row);
  }

  async list(query: PauseQuery): Promise<PauseRecord[]> {
    if (query.statuses !== undefined && query.statuses.length === 0) return [];
    if (query.limit !== undefined && query.limit <= 0) return [];
    const statuses = query.statuses === undefined ? undefined : [...new Set(query.statuses)];
    const args: Record<string, unknown> = { ...query };
    statuses?.forEach((status, i) => {
      args[`s${i}`] = status;
    });
    const { rows } = await this.#listOf(query, statuses?.length).execute(this.#store.db, args);
    return rows.map(toPause);
  }

  /**
   * The query for `list` with the filters `query` gives and `statuses` distinct statuses, compiled once
   * per such shape; a shape with more statuses than a pause can have is compiled for the call only, so
   * what callers pass cannot grow the cache.
   */
  #listOf(
    query: PauseQuery,
    statuses: number | undefined,
  ): PreparedQuery<Record<string, unknown>, Selectable<PauseTable>> {
    const filters = LIST_FILTERS.filter((filter) => query[filter] !== undefined);
    const limited = query.limit !== undefined;
    const shape = `${filters.join(",")}|${statuses ?? "-"}|${limited}`;
    let prepared = this.#lists.get(shape);
    if (prepared === undefined) {
      prepared = new PreparedQuery((slot) => {
        let select = this.#store.db
          .selectFrom("agboss_pauses")
          .selectAll()
          .where("tenant_id", "=", slot("tenantId") as string);
        if (statuses !== undefined) {
          const slots = Array.from({ length: statuses }, (_, i) => slot(`s${i}`) as PauseStatus);
          select = select.where("status", "in", slots);
        }
        for (const filter of filters)
          select = select.where(LIST_COLUMNS[filter], "=", slot(filter) as string);
        select = select.orderBy("asked_at", "asc").orderBy("pause_id", "asc");
        return limited ? select.limit(slot("limit") as number) : select;
      });
      if ((statuses ?? 0) <= STATUS_COUNT) this.#lists.set(shape, prepared);
    }
    return prepared;
  }

  async listResolvedBefore(args: {
    before: number;
    limit: number;
    after?: { readonly resolvedAt: number; readonly tenantId: string; readonly pauseId: string };
  }): Promise<PauseRecord[]> {
    const limit = Math.min(Math.trunc(args.limit), Number.MAX_SAFE_INTEGER);
    if (!(limit > 0)) return [];
    const { after } = args;
    if (after !== undefined) {
      // The next page: the same order, from just after the last pause of the page before.
      const rows = await this.#store.db
        .selectFrom("agboss_pauses")
        .selectAll()
        .where("status", "=", PauseStatus.Resolved)
        .where("resolved_at", "<", args.before)
        // One row-value comparison, which both dialects turn into a range of the resolved index.
        .where((eb) =>
          eb(
            eb.refTuple("resolved_at", "tenant_id", "pause_id"),
            ">",
            eb.tuple(after.resolvedAt, after.tenantId, after.pauseId),
          ),
        )
        .orderBy("resolved_at", "asc")
        .orderBy("tenant_id", "asc")
        .orderBy("pause_id", "asc")
        .limit(limit)
        .execute();
      return rows.map(toPause);
    }
    const { rows } = await this.#resolvedBefore.execute(this.#store.db, {
      status: PauseStatus.Resolved,
      before: args.before,
      limit,
    });
    return rows.map(toPause);
  }

  listDueDeadlines(args: {
    now: number;
    limit: number;
    after?: { readonly deadlineAt: number; readonly tenantId: string; readonly pauseId: string };
  }): Promise<PauseRecord[]> {
    const { after } = args;
    return this.#dueBy(PauseStatus.Pending, args, after && { at: after.deadlineAt, ...after });
  }

  /**
   * Pauses in `status` whose `next_deadline_at` is due by `now`, in (next_deadline_at, tenant_id,
   * pause_id) order from just after `after`, at most `limit`; with `owed`, only owed withdrawals (not
   * marked sent, and marked as owed).
   * Served by agboss_pauses_deadline_idx (status, next_deadline_at, tenant_id, pause_id): a range of its
   * `status` part from the cursor on, in index order, that stops at the limit.
   */
  async #dueBy(
    status: PauseStatus,
    args: { now: number; limit: number },
    after: { readonly at: number; readonly tenantId: string; readonly pauseId: string } | undefined,
    options: { owed?: boolean } = {},
  ): Promise<PauseRecord[]> {
    const limit = Math.min(Math.trunc(args.limit), Number.MAX_SAFE_INTEGER);
    if (!(limit > 0)) return [];
    let select = this.#store.db
      .selectFrom("agboss_pauses")
      .selectAll()
      .where("status", "=", status)
      .where("next_deadline_at", "<=", args.now);
    if (options.owed === true) {
      select = select.where("is_sent", "=", 0).where("deadline_reminders", "=", OWED_WITHDRAWAL);
    }
    if (after !== undefined) {
      select = select.where((eb) =>
        eb(
          eb.refTuple("next_deadline_at", "tenant_id", "pause_id"),
          ">",
          eb.tuple(after.at, after.tenantId, after.pauseId),
        ),
      );
    }
    const rows = await select
      .orderBy("next_deadline_at", "asc")
      .orderBy("tenant_id", "asc")
      .orderBy("pause_id", "asc")
      .limit(limit)
      .execute();
    return rows.map(toPause);
  }

  claimDeadline(
    tenantId: string,
    pauseId: string,
    args: { from: PauseDeadline; to: PauseDeadline | undefined },
  ): Promise<PauseRecord | undefined> {
    const { from, to } = args;
    return inWriteTransaction(this.#store, async (trx) => {
      const claim = trx
        .updateTable("agboss_pauses")
        .set({
          next_deadline_at: to === undefined ? null : to.at,
          deadline_reminders: to === undefined ? from.reminders : to.reminders,
        })
        .where("tenant_id", "=", tenantId)
        .where("pause_id", "=", pauseId)
        .where("status", "=", PauseStatus.Pending)
        .where("next_deadline_at", "=", from.at)
        .where("deadline_reminders", "=", from.reminders);
      return this.#changed(trx, claim, tenantId, pauseId);
    });
  }

  markSent(
    tenantId: string,
    pauseId: string,
    fence?: Fence,
    channelRef?: unknown,
  ): Promise<PauseRecord | undefined> {
    const set = { is_sent: 1, ...(channelRef === undefined ? {} : { channel_ref: toJsonText(channelRef) }) };
    // Setting the same flag again changes nothing: safe to run twice. Nothing waits for the mark to be
    // on disk (a process that dies before it asks again on recovery, as one that died during `send`
    // does): where commits are grouped it resolves once applied, and the pass's next checkpoint writes
    // join its commit.
    return this.#change({
      tenantId,
      pauseId,
      from: PauseStatus.Pending,
      set,
      fence,
      repeatable: true,
      applied: true,
    });
  }

  resolve(
    tenantId: string,
    pauseId: string,
    answer: PauseAnswer,
    at: number,
    options: { resolution?: PauseResolution } = {},
  ): Promise<PauseRecord | undefined> {
    return this.#change({
      tenantId,
      pauseId,
      from: PauseStatus.Pending,
      set: {
        status: PauseStatus.Resolved,
        resolution: options.resolution ?? PauseResolution.Replied,
        answer: toJsonText(answer),
        resolved_at: at,
      },
    });
  }

  take(
    tenantId: string,
    pauseId: string,
    args: { at: number; answer?: PauseAnswer; resolution?: PauseResolution },
    fence?: Fence,
  ): Promise<PauseRecord | undefined> {
    const decided =
      args.answer === undefined
        ? undefined
        : {
            status: PauseStatus.Taken,
            resolution: args.resolution ?? PauseResolution.Decided,
            answer: toJsonText(args.answer),
            resolved_at: args.at,
          };
    if (decided === undefined) {
      // Not safe to run twice: a second run finds it Taken.
      return this.#change({
        tenantId,
        pauseId,
        from: PauseStatus.Resolved,
        set: { status: PauseStatus.Taken },
        fence,
      });
    }
    return inWriteTransaction(
      this.#store,
      async (trx) => {
        await this.#fence.assert(trx, fence);
        if (decided !== undefined) {
          const taken = await this.#update(trx, tenantId, pauseId, PauseStatus.Pending, decided);
          if (taken !== undefined) return taken;
        }
        return this.#update(trx, tenantId, pauseId, PauseStatus.Resolved, { status: PauseStatus.Taken });
      },
      fence,
    );
  }

  saveToolResult(
    tenantId: string,
    pauseId: string,
    result: ToolResult,
    fence?: Fence,
  ): Promise<PauseRecord | undefined> {
    if (fence !== undefined && this.#store.capabilities.writableCtes) {
      // Only a result not yet stored is written, so running it again (after any transient fault, even
      // one that came after it landed) keeps the first: one statement, the stored record read only
      // when it wrote nothing.
      return inWriteStatement(
        this.#store,
        async (db) => {
          const set = { tool_result: toJsonText(result) };
          const from = PauseStatus.Taken;
          const saved = await this.#fencedUpdate(db, {
            tenantId,
            pauseId,
            from,
            set,
            fence,
            unsetResult: true,
          });
          if (saved !== undefined) return toPause(saved);
          const row = await this.#byPauseId.first(db, { tenantId, pauseId });
          return row?.status === PauseStatus.Taken ? toPause(row) : undefined;
        },
        fence,
      );
    }
    return inWriteTransaction(
      this.#store,
      async (trx) => {
        // The first result stays (a second one would come from a call that ran again): the update writes
        // only where none is stored, and the pause is read only when it wrote nothing.
        const set = { tool_result: toJsonText(result) };
        const saved = await this.#fence.around(trx, fence, (fenced) =>
          this.#update(trx, tenantId, pauseId, PauseStatus.Taken, set, { unsetResult: true, fenced }),
        );
        if (saved !== undefined) return saved;
        const row = await this.#byPauseId.first(trx, { tenantId, pauseId });
        return row?.status === PauseStatus.Taken ? toPause(row) : undefined;
      },
      fence,
    );
  }

  cancelByTenantIdAndPauseId(
    tenantId: string,
    pauseId: string,
    args: { resolution: PauseResolution; at: number; answer?: PauseAnswer; withdrawalOwedAt?: number },
    fence?: Fence,
  ): Promise<PauseRecord | undefined> {
    return this.#change({
      tenantId,
      pauseId,
      from: PauseStatus.Pending,
      set: {
        status: PauseStatus.Cancelled,
        resolution: args.resolution,
        resolved_at: args.at,
        ...(args.answer === undefined ? {} : { answer: toJsonText(args.answer) }),
        // A cancelled pause's next deadline is an owed withdrawal, marked by OWED_WITHDRAWAL in place of
        // a reminder count, and only while the pause is not marked sent (see `listOwedWithdrawals`,
        // `toPause`): one whose mark landed first owes none.
        next_deadline_at: args.withdrawalOwedAt ?? null,
        deadline_reminders: args.withdrawalOwedAt === undefined ? 0 : OWED_WITHDRAWAL,
      },
      fence,
    });
  }

  listOwedWithdrawals(args: {
    now: number;
    limit: number;
    after?: { readonly owedAt: number; readonly tenantId: string; readonly pauseId: string };
  }): Promise<PauseRecord[]> {
    // A cancelled pause's next deadline is its owed withdrawal: the deadline index's cancelled part.
    const { after } = args;
    return this.#dueBy(PauseStatus.Cancelled, args, after && { at: after.owedAt, ...after }, {
      owed: true,
    });
  }

  claimWithdrawal(tenantId: string, pauseId: string, channelRef?: unknown): Promise<PauseRecord | undefined> {
    return this.#changeCancelledUnsent(tenantId, pauseId, {
      is_sent: 1,
      next_deadline_at: null,
      deadline_reminders: 0,
      ...(channelRef === undefined ? {} : { channel_ref: toJsonText(channelRef) }),
    });
  }

  forgoWithdrawal(tenantId: string, pauseId: string): Promise<PauseRecord | undefined> {
    return this.#changeCancelledUnsent(
      tenantId,
      pauseId,
      { next_deadline_at: null, deadline_reminders: 0 },
      { owed: true },
    );
  }

  /** A conditional update of a Cancelled pause not marked sent (`owed`: with a withdrawal owed). */
  #changeCancelledUnsent(
    tenantId: string,
    pauseId: string,
    set: Updateable<PauseTable>,
    options: { owed?: boolean } = {},
  ): Promise<PauseRecord | undefined> {
    return inWriteTransaction(this.#store, async (trx) => {
      let change = trx
        .updateTable("agboss_pauses")
        .set(set)
        .where("tenant_id", "=", tenantId)
        .where("pause_id", "=", pauseId)
        .where("status", "=", PauseStatus.Cancelled)
        .where("is_sent", "=", 0);
      if (options.owed === true) change = change.where("deadline_reminders", "=", OWED_WITHDRAWAL);
      return this.#changed(trx, change, tenantId, pauseId);
    });
  }

  /**
   * Runs a conditional update of one pause and returns the pause as it wrote it, or undefined when the
   * condition did not hold: through `returning` where the dialect has it, else by reading it again.
   */
  async #changed(
    trx: Kysely<AgbossDatabase>,
    update: UpdateQueryBuilder<AgbossDatabase, "agboss_pauses", "agboss_pauses", UpdateResult>,
    tenantId: string,
    pauseId: string,
  ): Promise<PauseRecord | undefined> {
    if (this.#store.capabilities.supportsReturning) {
      const row = await update.returningAll().executeTakeFirst();
      return row === undefined ? undefined : toPause(row);
    }
    const result = await update.executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) return undefined;
    const row = await this.#byPauseId.first(trx, { tenantId, pauseId });
    return row === undefined ? undefined : toPause(row);
  }

  /**
   * Removes in batches of {@link RETENTION_BATCH}, each its own transaction, up to `limit`: a long
   * backlog (retention turned on, or shortened, over millions of pauses) never makes one statement that
   * holds its locks, or waits on the server, for minutes.
   */
  async deleteResolvedBefore(cutoff: number, limit = Number.POSITIVE_INFINITY): Promise<number> {
    let removed = 0;
    while (removed < limit) {
      const size = Math.min(RETENTION_BATCH, limit - removed);
      const result = await inWriteTransaction(this.#store, (trx) =>
        trx
          .deleteFrom("agboss_pauses")
          .where((eb) =>
            eb(
              eb.refTuple("tenant_id", "pause_id"),
              "in",
              eb
                .selectFrom("agboss_pauses")
                .select(["tenant_id", "pause_id"])
                .where("status", "in", [PauseStatus.Taken, PauseStatus.Cancelled])
                .where("resolved_at", "<", cutoff)
                .limit(size)
                .$asTuple("tenant_id", "pause_id"),
            ),
          )
          .executeTakeFirst(),
      );
      const batch = Number(result.numDeletedRows);
      removed += batch;
      if (batch < size) return removed;
    }
    return removed;
  }

  #change(args: {
    tenantId: string;
    pauseId: string;
    from: PauseStatus;
    set: Updateable<PauseTable>;
    fence?: Fence | undefined;
    /** Whether running the change twice leaves what running it once does. */
    repeatable?: boolean;
    /**
     * Whether, under a fence and where commits are grouped, the change may resolve once applied, before
     * its commit (see `WriteTransactions.applied`): for a write nothing relies on being committed.
     */
    applied?: boolean;
  }): Promise<PauseRecord | undefined> {
    const { fence } = args;
    if (fence !== undefined && this.#store.capabilities.writableCtes) {
      // One statement in autocommit, fence and change together: run again after any transient fault
      // when repeatable, else only where it surely did not land.
      const run = args.repeatable === true ? inWriteStatement : inWriteOnce;
      return run(
        this.#store,
        async (db) => {
          const row = await this.#fencedUpdate(db, { ...args, fence });
          return row === undefined ? undefined : toPause(row);
        },
        fence,
      );
    }
    const change = (trx: Kysely<AgbossDatabase>) =>
      this.#fence.around(trx, fence, (fenced) =>
        this.#updateRow(trx, args.tenantId, args.pauseId, args.from, args.set, { fenced }),
      );
    // With `returning`, the update is the change's one write (the fence is checked in it, or read
    // before it) and the last thing in it that can fail: the row is read into a record once it is done.
    const options = { oneWrite: this.#store.capabilities.supportsReturning };
    const changed =
      args.applied === true && fence !== undefined && this.#store.capabilities.groupCommit
        ? inAppliedWrite(this.#store, fence, change, options)
        : inWriteTransaction(this.#store, change, fence, options);
    return changed.then((row) => (row === undefined ? undefined : toPause(row)));
  }

  async #update(
    trx: Kysely<AgbossDatabase>,
    tenantId: string,
    pauseId: string,
    from: PauseStatus,
    set: Updateable<PauseTable>,
    options: { unsetResult?: boolean; fenced?: Fence | undefined } = {},
  ): Promise<PauseRecord | undefined> {
    const row = await this.#updateRow(trx, tenantId, pauseId, from, set, options);
    return row === undefined ? undefined : toPause(row);
  }

  /** {@link #update}'s statement: the updated row as stored, undefined when the pause was not in `from`. */
  async #updateRow(
    trx: Kysely<AgbossDatabase>,
    tenantId: string,
    pauseId: string,
    from: PauseStatus,
    set: Updateable<PauseTable>,
    options: { unsetResult?: boolean; fenced?: Fence | undefined } = {},
  ): Promise<Selectable<PauseTable> | undefined> {
    const changes = set as Record<string, unknown>;
    const columns = Object.keys(set).filter(
      (column) => changes[column] !== undefined,
    ) as (keyof Updateable<PauseTable> & string)[];
    const { fenced } = options;
    const update = this.#updateOf(columns, options.unsetResult === true, fenced !== undefined);
    const args: Record<string, unknown> = { ...set, tenantId, pauseId, from };
    if (fenced !== undefined) {
      args.fenceKey = fenced.key;
      args.fenceEpoch = fenced.epoch;
    }
    if (this.#store.capabilities.supportsReturning) return update.first(trx, args);
    if ((await update.affected(trx, args)) !== 1) return undefined;
    return this.#byPauseId.first(trx, { tenantId, pauseId });
  }

  /**
   * The conditional update as one statement whose `fence` clause holds the lease row for share: the
   * updated row, undefined when the pause was not in `from` (or, with `unsetResult`, had a tool result
   * already); {@link LeaseLostError} when the fence no longer held the lease, and then nothing changed.
   */
  async #fencedUpdate(
    db: Kysely<AgbossDatabase>,
    args: {
      tenantId: string;
      pauseId: string;
      from: PauseStatus;
      set: Updateable<PauseTable>;
      fence: Fence;
      unsetResult?: boolean;
    },
  ): Promise<Selectable<PauseTable> | undefined> {
    // Asked on every run: a pass of this fence may have been lost while the change waited or failed.
    this.#store.transactions?.refuseAfterLostCommit(args.fence);
    const changes = args.set as Record<string, unknown>;
    const columns = Object.keys(changes).filter((column) => changes[column] !== undefined) as UpdatedColumn[];
    const unsetResult = args.unsetResult === true;
    const key = `${unsetResult ? "unset:" : ""}${columns.join(",")}`;
    let query = this.#fencedUpdates.get(key);
    if (query === undefined) {
      query = this.#buildFencedUpdate(columns, unsetResult);
      this.#fencedUpdates.set(key, query);
    }
    const { tenantId, pauseId, from, fence } = args;
    const row = await query.first(db, { ...changes, tenantId, pauseId, from, ...fenceArgs(fence) });
    if (row?.fenced !== true) throw new LeaseLostError(fence);
    return row.pause_id === null ? undefined : (row as Selectable<PauseTable>);
  }

  #buildFencedUpdate(
    columns: readonly UpdatedColumn[],
    unsetResult: boolean,
  ): PreparedQuery<Record<string, unknown>, FencedUpdateRow> {
    return new PreparedQuery<Record<string, unknown>, FencedUpdateRow>((slot) => {
      const fencedSlot = slot as unknown as <K extends keyof FenceArgs>(name: K) => FenceArgs[K];
      return withFence(this.#store, true, fencedSlot)
        .with("changed", (qb) => {
          let update = qb
            .updateTable("agboss_pauses")
            .set(Object.fromEntries(columns.map((column) => [column, slot(column)])))
            .where("tenant_id", "=", slot("tenantId") as string)
            .where("pause_id", "=", slot("pauseId") as string)
            .where("status", "=", slot("from") as string)
            .where(FENCED);
          if (unsetResult) update = update.where("tool_result", "is", null);
          return update.returningAll();
        })
        .selectFrom(sql<{ fenced: boolean }>`(select ${FENCED} as fenced)`.as("f"))
        .leftJoin("changed", (join) => join.onTrue())
        .selectAll("changed")
        .select(sql<boolean>`f.fenced`.as("fenced"));
    });
  }

  /**
   * The conditional update of `columns`; with `unsetResult`, only of a pause that keeps no tool result
   * yet; `fenced`, only while the lease row carries the fence (see `FenceCheck.around`).
   */
  #updateOf(
    columns: readonly (keyof Updateable<PauseTable> & string)[],
    unsetResult: boolean,
    fenced: boolean,
  ) {
    const key = `${columns.join(",")}${unsetResult ? "|unset-result" : ""}${fenced ? "|fenced" : ""}`;
    let update = this.#updates.get(key);
    if (update === undefined) {
      update = new PreparedQuery((slot) => {
        const changed = this.#store.db
          .updateTable("agboss_pauses")
          .set(Object.fromEntries(columns.map((column) => [column, slot(column)])))
          .where("tenant_id", "=", slot("tenantId") as string)
          .where("pause_id", "=", slot("pauseId") as string)
          .where("status", "=", slot("from") as string);
        const unset = unsetResult ? changed.where("tool_result", "is", null) : changed;
        const query = fenced ? unset.where(holdsLease(slot)) : unset;
        return this.#store.capabilities.supportsReturning ? query.returningAll() : query;
      });
      this.#updates.set(key, update);
    }
    return update;
  }
}

const PAUSE_COLUMNS = [
  "tenant_id",
  "pause_id",
  "idempotency_key",
  "thread_id",
  "root_execution_id",
  "execution_id",
  "owner_id",
  "status",
  "resolution",
  "is_sent",
  "channel",
  "answered_by",
  "agent",
  "ask",
  "step",
  "answer",
  "asked_at",
  "resolved_at",
  "channel_ref",
  "tool_result",
  "next_deadline_at",
  "deadline_reminders",
  "expires_at",
] as const satisfies readonly (keyof PauseTable)[];

/** Each pause column's SQL type, for a statement whose parameters nothing else types. */
const PAUSE_COLUMN_TYPES: Record<(typeof PAUSE_COLUMNS)[number], "text" | "integer" | "bigint"> = {
  tenant_id: "text",
  pause_id: "text",
  idempotency_key: "text",
  thread_id: "text",
  root_execution_id: "text",
  execution_id: "text",
  owner_id: "text",
  status: "text",
  resolution: "text",
  is_sent: "integer",
  channel: "text",
  answered_by: "text",
  agent: "text",
  ask: "text",
  step: "text",
  answer: "text",
  asked_at: "bigint",
  resolved_at: "bigint",
  channel_ref: "text",
  tool_result: "text",
  next_deadline_at: "bigint",
  deadline_reminders: "integer",
  expires_at: "bigint",
};

function toRow(record: PauseRecord) {
  return {
    tenant_id: record.tenantId,
    pause_id: record.pauseId,
    idempotency_key: record.idempotencyKey,
    thread_id: record.threadId,
    root_execution_id: record.rootExecutionId,
    execution_id: record.executionId,
    owner_id: record.ownerId,
    status: record.status,
    resolution: record.resolution ?? null,
    is_sent: record.isSent ? 1 : 0,
    channel: record.channel,
    answered_by: record.answeredBy,
    agent: record.agent,
    ask: toJsonText(record.ask),
    step: toJsonText(record.step),
    answer: record.answer === undefined ? null : toJsonText(record.answer),
    asked_at: record.askedAt,
    resolved_at: record.resolvedAt ?? null,
    channel_ref: record.channelRef === undefined ? null : toJsonText(record.channelRef),
    tool_result: record.toolResult === undefined ? null : toJsonText(record.toolResult),
    next_deadline_at: record.deadline === undefined ? null : record.deadline.at,
    deadline_reminders: record.deadline?.reminders ?? 0,
    expires_at: record.expiresAt ?? null,
  };
}

/**
 * What a Cancelled pause's `deadline_reminders` holds in place of a reminder count when its
 * `next_deadline_at` is an owed withdrawal: a cancelled pause from a store that kept its deadlines (an
 * instance of an older version, during a rolling upgrade) keeps a count of 0 or more, and owes nothing.
 */
const OWED_WITHDRAWAL = -1;

/**
 * What a pause's `next_deadline_at` means by its status: a Pending pause's next deadline; a Cancelled
 * one's owed withdrawal while it is not marked sent and marked owed; nothing otherwise.
 */
function deadlinesOf(
  row: Selectable<PauseTable>,
): Pick<PauseRecord, "deadline"> | Pick<PauseRecord, "withdrawalOwedAt"> | Record<string, never> {
  if (row.next_deadline_at === null || row.next_deadline_at === undefined) return {};
  if (row.status === PauseStatus.Cancelled) {
    const owed = toNumber(row.is_sent) === 0 && toNumber(row.deadline_reminders) === OWED_WITHDRAWAL;
    return owed ? { withdrawalOwedAt: toMillis(row.next_deadline_at) } : {};
  }
  return { deadline: { at: toMillis(row.next_deadline_at), reminders: toNumber(row.deadline_reminders) } };
}

function toPause(row: Selectable<PauseTable>): PauseRecord {
  return {
    tenantId: row.tenant_id,
    pauseId: row.pause_id,
    idempotencyKey: row.idempotency_key,
    threadId: row.thread_id,
    rootExecutionId: row.root_execution_id,
    executionId: row.execution_id,
    ownerId: row.owner_id,
    status: row.status as PauseStatus,
    resolution: (row.resolution ?? undefined) as PauseResolution | undefined,
    isSent: toNumber(row.is_sent) === 1,
    channel: row.channel,
    answeredBy: row.answered_by as PauseAnswerer,
    agent: row.agent,
    ask: fromJsonText(row.ask) as PauseRecord["ask"],
    step: fromJsonText(row.step) as PauseRecord["step"],
    answer: row.answer === null ? undefined : (fromJsonText(row.answer) as PauseAnswer),
    askedAt: toMillis(row.asked_at),
    resolvedAt: toOptionalMillis(row.resolved_at),
    ...(row.channel_ref === null || row.channel_ref === undefined
      ? {}
      : { channelRef: fromJsonText(row.channel_ref) }),
    ...(row.tool_result === null || row.tool_result === undefined
      ? {}
      : { toolResult: fromJsonText(row.tool_result) as ToolResult }),
    ...deadlinesOf(row),
    ...(row.expires_at === null || row.expires_at === undefined
      ? {}
      : { expiresAt: toMillis(row.expires_at) }),
  };
}
