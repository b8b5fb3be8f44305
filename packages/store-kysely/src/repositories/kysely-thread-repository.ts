import type { ThreadRecord, ThreadRepository } from "@agboss/core";
import type { Selectable } from "kysely";
import type { ThreadTable } from "../schema/agboss-database.js";
import { toMillis } from "../schema/columns.js";
import { inWriteTransaction, type StoreDatabase } from "../write-transactions.js";

/** {@link ThreadRepository} on kysely. */
export class KyselyThreadRepository implements ThreadRepository {
  readonly #store: StoreDatabase;

  constructor(store: StoreDatabase) {
    this.#store = store;
  }

  async findByTenantIdAndThreadId(tenantId: string, threadId: string): Promise<ThreadRecord | undefined> {
    const row = await this.#store.db
      .selectFrom("agboss_threads")
      .selectAll()
      .where("tenant_id", "=", tenantId)
      .where("thread_id", "=", threadId)
      .executeTakeFirst();
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
    await inWriteTransaction(this.#store, (trx) =>
      trx
        .insertInto("agboss_threads")
        .values(values)
        .onConflict((oc) =>
          oc.columns(["tenant_id", "thread_id"]).doUpdateSet({
            owner_id: values.owner_id,
            workflow_name: values.workflow_name,
            latest_execution_id: values.latest_execution_id,
            created_at: values.created_at,
            updated_at: values.updated_at,
          }),
        )
        .execute(),
    );
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
