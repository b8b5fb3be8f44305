import { LeaseLostError } from "@agboss/core";
import type {
  ExecutionRecordRepository,
  Fence,
  StoredExecution,
  StoredPauseAnswer,
} from "@agboss/core/store";
import { RELEASED_LEASE_EXPIRY } from "@agboss/core/store";
import type { Insertable, OnConflictBuilder, Selectable } from "kysely";
import { FenceCheck } from "../fence-check.js";
import { FENCED, type FenceArgs, fenceArgs, runFenced, typed, withFence } from "../fenced-statement.js";
import { PreparedQuery } from "../prepared-query.js";
import type { AgbossDatabase, ExecutionTable, PauseAnswerTable } from "../schema/agboss-database.js";
import { fromJsonText, toJsonText, toMillis } from "../schema/columns.js";
import { inWriteStatement, inWriteTransaction, type StoreDatabase } from "../write-transactions.js";
import { expireLeaseQuery } from "./kysely-lease-repository.js";

/** {@link ExecutionRecordRepository} on kysely; records and answers are JSON text columns. */
export class KyselyExecutionRecordRepository implements ExecutionRecordRepository {
  readonly #store: StoreDatabase;
  readonly #fence: FenceCheck;
  readonly #find: PreparedQuery<{ tenantId: string; executionId: string }, Selectable<ExecutionTable>>;
  readonly #save: PreparedQuery<Insertable<ExecutionTable>>;
  /** Fenced saves as one statement, by whether the lease is released, where the dialect allows it. */
  readonly #fencedSaves = new Map<boolean, PreparedQuery<FencedSaveArgs, { fenced: boolean }>>();
  readonly #releaseLease: PreparedQuery<{ key: string; epoch: number; expires_at: number }>;
  /** The sweep's pages, by how many statuses and whether they start after a cursor, compiled once each. */
  readonly #pages = new Map<string, PreparedQuery<Record<string, unknown>, ExecutionKeysRow>>();
  readonly #saveAnswer: PreparedQuery<Insertable<PauseAnswerTable>>;
  readonly #answersOf: PreparedQuery<
    { tenantId: string; rootExecutionId: string },
    Selectable<PauseAnswerTable>
  >;

  constructor(store: StoreDatabase) {
    this.#store = store;
    this.#fence = new FenceCheck(store);
    this.#releaseLease = expireLeaseQuery(store);
    const db = store.db;
    this.#find = new PreparedQuery((slot) =>
      db
        .selectFrom("agboss_executions")
        .selectAll()
        .where("tenant_id", "=", slot("tenantId"))
        .where("execution_id", "=", slot("executionId")),
    );
    this.#saveAnswer = new PreparedQuery((slot) =>
      db
        .insertInto("agboss_pause_answers")
        .values({
          tenant_id: slot("tenant_id"),
          idempotency_key: slot("idempotency_key"),
          root_execution_id: slot("root_execution_id"),
          asked_at: slot("asked_at"),
          answer: slot("answer"),
        })
        .onConflict((oc) => oc.columns(["tenant_id", "idempotency_key"]).doNothing()),
    );
    this.#answersOf = new PreparedQuery((slot) =>
      db
        .selectFrom("agboss_pause_answers")
        .selectAll()
        .where("tenant_id", "=", slot("tenantId"))
        .where("root_execution_id", "=", slot("rootExecutionId"))
        .orderBy("asked_at", "asc")
        .orderBy("idempotency_key", "asc"),
    );
    this.#save = new PreparedQuery((slot) =>
      db
        .insertInto("agboss_executions")
        .values({
          tenant_id: slot("tenant_id"),
          execution_id: slot("execution_id"),
          root_execution_id: slot("root_execution_id"),
          parent_execution_id: slot("parent_execution_id"),
          thread_id: slot("thread_id"),
          workflow_name: slot("workflow_name"),
          status: slot("status"),
          started_at: slot("started_at"),
          updated_at: slot("updated_at"),
          record: slot("record"),
        })
        .onConflict(replaceExecution),
    );
  }

  async save(
    execution: StoredExecution,
    fence?: Fence,
    options?: { readonly release?: boolean },
  ): Promise<void> {
    const values = {
      tenant_id: execution.tenantId,
      execution_id: execution.executionId,
      root_execution_id: execution.rootExecutionId,
      parent_execution_id: execution.parentExecutionId ?? null,
      thread_id: execution.threadId,
      workflow_name: execution.workflowName,
      status: execution.status,
      started_at: execution.startedAt,
      updated_at: execution.updatedAt,
      record: toJsonText(execution.record),
    };
    const release = options?.release === true ? fence : undefined;
    if (fence !== undefined && this.#store.capabilities.writableCtes && !this.#checkedInUnit(fence)) {
      // Under a fence the save is idempotent (no other holder can write in between), so it may be one
      // statement in autocommit, run again after any transient fault.
      const releases = release !== undefined;
      let query = this.#fencedSaves.get(releases);
      if (query === undefined) {
        query = this.#buildFencedSave(releases);
        this.#fencedSaves.set(releases, query);
      }
      try {
        await runFenced(this.#store, query, { ...values, ...fenceArgs(fence) }, fence);
      } catch (error) {
        // Run again after a fault that left its outcome unknown (a reply lost on the way back), the save
        // may find the fence lost because its first run landed: it let the lease go, and another holder
        // took it. The row says whether it did.
        if (!(error instanceof LeaseLostError) || !(await this.#stored(values))) throw error;
      }
      return;
    }
    await inWriteTransaction(
      this.#store,
      async (trx) => {
        await this.#fence.assert(trx, fence);
        // Nothing reads what these return: in a transaction they may go with its next statement.
        await this.#save.unread(this.#store, trx, values);
        if (release !== undefined) {
          await this.#releaseLease.unread(this.#store, trx, {
            key: release.key,
            epoch: release.epoch,
            expires_at: RELEASED_LEASE_EXPIRY,
          });
        }
      },
      fence,
      // Both are idempotent, and a record saved with its lease left to lapse is a state a holder may
      // leave behind (as one that dies right after the save does).
      { idempotent: true },
    );
  }

  /** Whether the row holds exactly `values` (status, time and record as this save wrote them). */
  async #stored(values: Insertable<ExecutionTable>): Promise<boolean> {
    const row = await this.#find.first(this.#store.db, {
      tenantId: values.tenant_id,
      executionId: values.execution_id,
    });
    return (
      row !== undefined &&
      row.status === values.status &&
      toMillis(row.updated_at) === values.updated_at &&
      row.record === values.record
    );
  }

  /**
   * Whether the caller's unit of work found `fence` current already (it took the lease, say): the lease
   * row is locked until the unit commits, so the save needs no check of its own, and, written as a plain
   * upsert, may go to the server with the unit's next statement or its `commit`.
   */
  #checkedInUnit(fence: Fence): boolean {
    const transactions = this.#store.transactions;
    const unit = transactions?.current();
    return unit !== undefined && transactions?.fenceChecked(unit, fence) === true;
  }

  /** The record upserted, and with `releases` the lease released, only while the fence holds it. */
  #buildFencedSave(releases: boolean): PreparedQuery<FencedSaveArgs, { fenced: boolean }> {
    return new PreparedQuery<FencedSaveArgs, { fenced: boolean }>((slot) => {
      const text = (name: keyof FencedSaveArgs & string) => typed(slot(name), "text");
      const bigint = (name: keyof FencedSaveArgs & string) => typed(slot(name), "bigint");
      let query = withFence(this.#store, true, slot).with("saved", (qb) =>
        qb
          .insertInto("agboss_executions")
          .columns([...KEY_COLUMNS, "record"])
          .expression(
            qb
              .selectNoFrom([
                text("tenant_id").as("tenant_id"),
                text("execution_id").as("execution_id"),
                text("root_execution_id").as("root_execution_id"),
                text("parent_execution_id").as("parent_execution_id"),
                text("thread_id").as("thread_id"),
                text("workflow_name").as("workflow_name"),
                text("status").as("status"),
                bigint("started_at").as("started_at"),
                bigint("updated_at").as("updated_at"),
                text("record").as("record"),
              ])
              .where(FENCED),
          )
          .onConflict(replaceExecution),
      );
      if (releases) {
        query = query.with("released", (qb) =>
          qb
            .updateTable("agboss_leases")
            .set({ expires_at: RELEASED_LEASE_EXPIRY })
            .where("key", "=", slot("key"))
            .where("epoch", "=", slot("epoch"))
            .where(FENCED),
        ) as unknown as typeof query;
      }
      return query.selectNoFrom(FENCED.as("fenced"));
    });
  }

  async findByTenantIdAndExecutionId(
    tenantId: string,
    executionId: string,
  ): Promise<StoredExecution | undefined> {
    const row = await this.#find.first(this.#store.db, { tenantId, executionId });
    return row === undefined ? undefined : toExecution(row);
  }

  async listByTenantIdAndThreadId(tenantId: string, threadId: string): Promise<StoredExecution[]> {
    const rows = await this.#store.db
      .selectFrom("agboss_executions")
      .selectAll()
      .where("tenant_id", "=", tenantId)
      .where("thread_id", "=", threadId)
      .orderBy("started_at", "asc")
      .orderBy("execution_id", "asc")
      .execute();
    return rows.map(toExecution);
  }

  async listByStatus(
    statuses: readonly string[],
    limit: number,
    after?: { readonly updatedAt: number; readonly tenantId: string; readonly executionId: string },
  ): Promise<Omit<StoredExecution, "record">[]> {
    if (statuses.length === 0 || limit <= 0) return [];
    // Compiled once per shape: the sweep reads page after page of a large backlog with it.
    const shape = `${statuses.length}/${after !== undefined}`;
    let page = this.#pages.get(shape);
    if (page === undefined) {
      page = this.#buildPage(statuses.length, after !== undefined);
      this.#pages.set(shape, page);
    }
    const args: Record<string, unknown> = { limit };
    statuses.forEach((status, i) => {
      args[`s${i}`] = status;
    });
    if (after !== undefined) {
      args.updatedAt = after.updatedAt;
      args.tenantId = after.tenantId;
      args.executionId = after.executionId;
    }
    const { rows } = await page.execute(this.#store.db, args);
    return rows.map(toExecutionKeys);
  }

  #buildPage(statuses: number, afterCursor: boolean) {
    return new PreparedQuery<Record<string, unknown>, ExecutionKeysRow>((slot) => {
      let query = this.#store.db
        .selectFrom("agboss_executions")
        .select(KEY_COLUMNS)
        .where(
          "status",
          "in",
          Array.from({ length: statuses }, (_, i) => slot(`s${i}`) as string),
        );
      if (afterCursor) {
        // One row-value comparison, which both dialects turn into a range of the status index: the page
        // starts at the cursor instead of at the first running execution.
        query = query.where((eb) =>
          eb(
            eb.refTuple("updated_at", "tenant_id", "execution_id"),
            ">",
            eb.tuple(slot("updatedAt") as number, slot("tenantId") as string, slot("executionId") as string),
          ),
        );
      }
      return query
        .orderBy("updated_at", "asc")
        .orderBy("tenant_id", "asc")
        .orderBy("execution_id", "asc")
        .limit(slot("limit") as number);
    });
  }

  async savePauseAnswer(tenantId: string, rootExecutionId: string, answer: StoredPauseAnswer): Promise<void> {
    // One statement whose result nothing reads, which keeps the entry already stored: in a unit of work
    // it may go to the server with the unit's next statement; on its own it runs in autocommit, and
    // runs again after any fault.
    await inWriteStatement(this.#store, (db) =>
      this.#saveAnswer.unread(this.#store, db, {
        tenant_id: tenantId,
        idempotency_key: answer.idempotencyKey,
        root_execution_id: rootExecutionId,
        asked_at: answer.askedAt,
        answer: toJsonText(answer.answer),
      }),
    );
  }

  async findPauseAnswersByTenantIdAndRootExecutionId(
    tenantId: string,
    rootExecutionId: string,
  ): Promise<StoredPauseAnswer[]> {
    const { rows } = await this.#answersOf.execute(this.#store.db, { tenantId, rootExecutionId });
    return rows.map((row) => ({
      tenantId: row.tenant_id,
      rootExecutionId: row.root_execution_id,
      idempotencyKey: row.idempotency_key,
      askedAt: toMillis(row.asked_at),
      answer: fromJsonText(row.answer),
    }));
  }
}

function toExecution(row: Selectable<ExecutionTable>): StoredExecution {
  return { ...toExecutionKeys(row), record: fromJsonText(row.record) };
}

/** An execution row read without its record. */
function toExecutionKeys(row: ExecutionKeysRow): Omit<StoredExecution, "record"> {
  return {
    tenantId: row.tenant_id,
    executionId: row.execution_id,
    rootExecutionId: row.root_execution_id,
    parentExecutionId: row.parent_execution_id ?? undefined,
    threadId: row.thread_id,
    workflowName: row.workflow_name,
    status: row.status,
    startedAt: toMillis(row.started_at),
    updatedAt: toMillis(row.updated_at),
  };
}

type FencedSaveArgs = Insertable<ExecutionTable> & FenceArgs;

type ExecutionKeysRow = Omit<Selectable<ExecutionTable>, "record">;

/** Every column but the record: what the sweep's pages read. */
const KEY_COLUMNS = [
  "tenant_id",
  "execution_id",
  "root_execution_id",
  "parent_execution_id",
  "thread_id",
  "workflow_name",
  "status",
  "started_at",
  "updated_at",
] as const satisfies readonly (keyof ExecutionKeysRow)[];

/**
 * On a record already stored under its key, the columns that change take the new value. An execution's
 * thread and start never change: left out of the update, its entry in the thread index is not rewritten
 * (SQLite rewrites an index entry whenever an update sets one of its columns, even to the same value).
 */
function replaceExecution(oc: OnConflictBuilder<AgbossDatabase, "agboss_executions">) {
  return oc.columns(["tenant_id", "execution_id"]).doUpdateSet((eb) => ({
    root_execution_id: eb.ref("excluded.root_execution_id"),
    parent_execution_id: eb.ref("excluded.parent_execution_id"),
    workflow_name: eb.ref("excluded.workflow_name"),
    status: eb.ref("excluded.status"),
    updated_at: eb.ref("excluded.updated_at"),
    record: eb.ref("excluded.record"),
  }));
}
