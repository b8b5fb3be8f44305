import type { ThreadRecord, ThreadRepository } from "@agboss/core/store";
import type { Insertable, Selectable } from "kysely";
import { PreparedQuery } from "../prepared-query.js";
import type { ThreadTable } from "../schema/agboss-database.js";
import { toMillis } from "../schema/columns.js";
import { inWriteTransaction, type StoreDatabase } from "../write-transactions.js";

/** {@link ThreadRepository} on kysely. */
export class KyselyThreadRepository implements ThreadRepository {
  readonly #store: StoreDatabase;
  readonly #find: PreparedQuery<{ tenantId: string; threadId: string }, Selectable<ThreadTable>>;
  readonly #save: PreparedQuery<Insertable<ThreadTable>>;

  constructor(store: StoreDatabase) {
    this.#store = store;
    const db = store.db;
    this.#find = new PreparedQuery((slot) =>
      db
        .selectFrom("agboss_threads")
        .selectAll()
        .where("tenant_id", "=", slot("tenantId"))
        .where("thread_id", "=", slot("threadId")),
    );
    this.#save = new PreparedQuery((slot) =>
      db
        .insertInto("agboss_threads")
        .values({
          tenant_id: slot("tenant_id"),
          thread_id: slot("thread_id"),
          owner_id: slot("owner_id"),
          workflow_name: slot("workflow_name"),
          latest_execution_id: slot("latest_execution_id"),
          created_at: slot("created_at"),
          updated_at: slot("updated_at"),
        })
        .onConflict((oc) =>
          oc.columns(["tenant_id", "thread_id"]).doUpdateSet((eb) => ({
            owner_id: eb.ref("excluded.owner_id"),
            workflow_name: eb.ref("excluded.workflow_name"),
            latest_execution_id: eb.ref("excluded.latest_execution_id"),
            created_at: eb.ref("excluded.created_at"),
            updated_at: eb.ref("excluded.updated_at"),
          })),
        ),
    );
  }

  async findByTenantIdAndThreadId(tenantId: string, threadId: string): Promise<ThreadRecord | undefined> {
    const row = await this.#find.first(this.#store.db, { tenantId, threadId });
    return row === undefined ? undefined : toThread(row);
  }

  async save(thread: ThreadRecord): Promise<void> {
    const values = {
      tenant_id: thread.tenantId,
      thread_id: thread.threadId,
      owner_id: thread.ownerId,
      workflow_name: thread.workflowName,
      latest_execution_id: thread.latestExecutionId,
      created_at: thread.createdAt,
      updated_at: thread.updatedAt,
    };
    // Nothing reads what the save returns: it may go to the server with its transaction's next statement
    // or commit. A transaction, not a statement run again after any fault: an upsert run again after it
    // landed could overwrite a newer save of another process.
    await inWriteTransaction(this.#store, (trx) => this.#save.unread(this.#store, trx, values));
  }
}

function toThread(row: Selectable<ThreadTable>): ThreadRecord {
  return {
    tenantId: row.tenant_id,
    threadId: row.thread_id,
    ownerId: row.owner_id,
    workflowName: row.workflow_name,
    latestExecutionId: row.latest_execution_id,
    createdAt: toMillis(row.created_at),
    updatedAt: toMillis(row.updated_at),
  };
}
