import { type Kysely, sql } from "kysely";
import type { AgbossDatabase } from "../schema/agboss-database.js";
import type { StoreMigration } from "./store-migration.js";

/**
 * The store's schema, oldest first: a step's position is its version, so steps are only ever appended.
 * Every statement is portable between SQLite and Postgres; type names that differ come from the capabilities.
 */
export const STORE_MIGRATIONS: readonly StoreMigration[] = Object.freeze([
  {
    name: "threads-executions-leases-pauses",
    async up(db) {
      await db.schema
        .createTable("agboss_threads")
        .addColumn("tenant_id", "text", (c) => c.notNull())
        .addColumn("thread_id", "text", (c) => c.notNull())
        .addColumn("owner_id", "text", (c) => c.notNull())
        .addColumn("workflow_name", "text", (c) => c.notNull())
        .addColumn("latest_execution_id", "text", (c) => c.notNull())
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .addColumn("updated_at", "bigint", (c) => c.notNull())
        .addPrimaryKeyConstraint("agboss_threads_pk", ["tenant_id", "thread_id"])
        .execute();

      await db.schema
        .createTable("agboss_executions")
        .addColumn("tenant_id", "text", (c) => c.notNull())
        .addColumn("execution_id", "text", (c) => c.notNull())
        .addColumn("root_execution_id", "text", (c) => c.notNull())
        .addColumn("parent_execution_id", "text")
        .addColumn("thread_id", "text", (c) => c.notNull())
        .addColumn("workflow_name", "text", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("started_at", "bigint", (c) => c.notNull())
        .addColumn("updated_at", "bigint", (c) => c.notNull())
        .addColumn("record", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("agboss_executions_pk", ["tenant_id", "execution_id"])
        .execute();
      await db.schema
        .createIndex("agboss_executions_thread_idx")
        .on("agboss_executions")
        .columns(["tenant_id", "thread_id", "started_at"])
        .execute();
      await db.schema
        .createIndex("agboss_executions_status_idx")
        .on("agboss_executions")
        .columns(["status", "updated_at"])
        .execute();

      await db.schema
        .createTable("agboss_pause_answers")
        .addColumn("tenant_id", "text", (c) => c.notNull())
        .addColumn("idempotency_key", "text", (c) => c.notNull())
        .addColumn("root_execution_id", "text", (c) => c.notNull())
        .addColumn("asked_at", "bigint", (c) => c.notNull())
        .addColumn("answer", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("agboss_pause_answers_pk", ["tenant_id", "idempotency_key"])
        .execute();
      await db.schema
        .createIndex("agboss_pause_answers_root_idx")
        .on("agboss_pause_answers")
        .columns(["tenant_id", "root_execution_id", "asked_at"])
        .execute();

      await db.schema
        .createTable("agboss_leases")
        .addColumn("key", "text", (c) => c.primaryKey())
        .addColumn("holder", "text", (c) => c.notNull())
        .addColumn("epoch", "bigint", (c) => c.notNull())
        .addColumn("expires_at", "bigint", (c) => c.notNull())
        .execute();

      await db.schema
        .createTable("agboss_pauses")
        .addColumn("tenant_id", "text", (c) => c.notNull())
        .addColumn("pause_id", "text", (c) => c.notNull())
        .addColumn("idempotency_key", "text", (c) => c.notNull())
        .addColumn("thread_id", "text", (c) => c.notNull())
        .addColumn("root_execution_id", "text", (c) => c.notNull())
        .addColumn("execution_id", "text", (c) => c.notNull())
        .addColumn("owner_id", "text", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("resolution", "text")
        .addColumn("is_sent", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("channel", "text", (c) => c.notNull())
        .addColumn("answered_by", "text", (c) => c.notNull())
        .addColumn("agent", "text", (c) => c.notNull())
        .addColumn("ask", "text", (c) => c.notNull())
        .addColumn("step", "text", (c) => c.notNull())
        .addColumn("answer", "text")
        .addColumn("asked_at", "bigint", (c) => c.notNull())
        .addColumn("resolved_at", "bigint")
        .execute();
      await db.schema
        .createIndex("agboss_pauses_pause_id_idx")
        .on("agboss_pauses")
        .columns(["tenant_id", "pause_id"])
        .unique()
        .execute();
      await db.schema
        .createIndex("agboss_pauses_idempotency_idx")
        .on("agboss_pauses")
        .columns(["tenant_id", "idempotency_key"])
        .unique()
        .execute();
      await db.schema
        .createIndex("agboss_pauses_root_idx")
        .on("agboss_pauses")
        .columns(["tenant_id", "root_execution_id", "asked_at"])
        .execute();
      await db.schema
        .createIndex("agboss_pauses_thread_idx")
        .on("agboss_pauses")
        .columns(["tenant_id", "thread_id", "asked_at"])
        .execute();
      await db.schema
        .createIndex("agboss_pauses_retention_idx")
        .on("agboss_pauses")
        .columns(["status", "resolved_at"])
        .execute();
      await db.schema
        .createIndex("agboss_pauses_inbox_idx")
        .on("agboss_pauses")
        .columns(["tenant_id", "status", "asked_at"])
        .execute();
    },
  },
  {
    name: "langgraph-checkpoints",
    async up(db, capabilities) {
      const blob = sql.raw(capabilities.blobType);
      await db.schema
        .createTable("agboss_checkpoints")
        .addColumn("thread_id", "text", (c) => c.notNull())
        .addColumn("checkpoint_ns", "text", (c) => c.notNull())
        .addColumn("checkpoint_id", "text", (c) => c.notNull())
        .addColumn("parent_checkpoint_id", "text")
        .addColumn("type", "text", (c) => c.notNull())
        .addColumn("checkpoint", blob, (c) => c.notNull())
        .addColumn("metadata_type", "text", (c) => c.notNull())
        .addColumn("metadata", blob, (c) => c.notNull())
        .addColumn("channel_origins", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("agboss_checkpoints_pk", ["thread_id", "checkpoint_ns", "checkpoint_id"])
        .execute();

      await db.schema
        .createTable("agboss_checkpoint_blobs")
        .addColumn("thread_id", "text", (c) => c.notNull())
        .addColumn("checkpoint_ns", "text", (c) => c.notNull())
        .addColumn("checkpoint_id", "text", (c) => c.notNull())
        .addColumn("channel", "text", (c) => c.notNull())
        .addColumn("type", "text", (c) => c.notNull())
        .addColumn("value", blob)
        .addPrimaryKeyConstraint("agboss_checkpoint_blobs_pk", [
          "thread_id",
          "checkpoint_ns",
          "checkpoint_id",
          "channel",
        ])
        .execute();

      await db.schema
        .createTable("agboss_checkpoint_writes")
        .addColumn("thread_id", "text", (c) => c.notNull())
        .addColumn("checkpoint_ns", "text", (c) => c.notNull())
        .addColumn("checkpoint_id", "text", (c) => c.notNull())
        .addColumn("task_id", "text", (c) => c.notNull())
        .addColumn("idx", "integer", (c) => c.notNull())
        .addColumn("channel", "text", (c) => c.notNull())
        .addColumn("type", "text", (c) => c.notNull())
        .addColumn("value", blob, (c) => c.notNull())
        .addColumn("task_path", "text", (c) => c.notNull().defaultTo(""))
        .addPrimaryKeyConstraint("agboss_checkpoint_writes_pk", [
          "thread_id",
          "checkpoint_ns",
          "checkpoint_id",
          "task_id",
          "idx",
        ])
        .execute();
    },
  },
  {
    name: "budget-ledger",
    async up(db) {
      await db.schema
        .createTable("agboss_budget_ledger")
        .addColumn("tenant_id", "text", (c) => c.notNull())
        .addColumn("budget", "text", (c) => c.notNull())
        .addColumn("window_start", "bigint", (c) => c.notNull())
        .addColumn("model_calls", "bigint", (c) => c.notNull())
        .addColumn("input_tokens", "bigint", (c) => c.notNull())
        .addColumn("output_tokens", "bigint", (c) => c.notNull())
        .addColumn("expires_at", "bigint")
        .addPrimaryKeyConstraint("agboss_budget_ledger_pk", ["tenant_id", "budget", "window_start"])
        .execute();
      await db.schema
        .createIndex("agboss_budget_ledger_expires_idx")
        .on("agboss_budget_ledger")
        .column("expires_at")
        .execute();
    },
  },
  {
    // Serves the recovery sweep's `listResolvedBefore` (status = ? and resolved_at < ? order by
    // resolved_at, tenant_id, pause_id limit ?) straight from the index, and retention as the old one did.
    name: "pauses-resolved-index",
    async up(db) {
      await db.schema
        .createIndex("agboss_pauses_resolved_idx")
        .on("agboss_pauses")
        .columns(["status", "resolved_at", "tenant_id", "pause_id"])
        .execute();
      await db.schema.dropIndex("agboss_pauses_retention_idx").execute();
    },
  },
  {
    // What a channel's send gave back to find its question again (a chat message's id, say), so a
    // withdrawal can go straight to it.
    name: "pauses-channel-ref",
    async up(db) {
      await db.schema.alterTable("agboss_pauses").addColumn("channel_ref", "text").execute();
    },
  },
  {
    // One person's open questions across their threads (`app.pauses.list({ ownerId })`), oldest first.
    name: "pauses-owner-index",
    async up(db) {
      await db.schema
        .createIndex("agboss_pauses_owner_idx")
        .on("agboss_pauses")
        .columns(["tenant_id", "owner_id", "status", "asked_at"])
        .execute();
    },
  },
  {
    // What an approved tool call returned, kept on its pause the moment it returned, so a step run again
    // after a crash or a takeover reads it instead of calling the tool a second time.
    name: "pauses-tool-result",
    async up(db) {
      await db.schema.alterTable("agboss_pauses").addColumn("tool_result", "text").execute();
    },
  },
  {
    // A tree's pauses by status (the pending ones, listed at the end of every pass): with the status in
    // the index, SQLite no longer prefers the tenant's inbox index, which reads every pending pause of
    // the tenant (48 ms at 100,000). It also serves the old root index's lookups, which it replaces.
    name: "pauses-root-status-index",
    async up(db) {
      await db.schema
        .createIndex("agboss_pauses_root_status_idx")
        .on("agboss_pauses")
        .columns(["tenant_id", "root_execution_id", "status", "asked_at"])
        .execute();
      await db.schema.dropIndex("agboss_pauses_root_idx").execute();
    },
  },
  {
    // The recovery sweep's pages of running executions (`listByStatus(statuses, limit, after)`: status = ?,
    // after the cursor, order by updated_at, tenant_id, execution_id): with the whole order in the index a
    // page is read from the cursor on and nothing is sorted; the old index sorted every running execution
    // for each page. It serves every lookup the old one did, which it replaces.
    name: "executions-status-order-index",
    async up(db) {
      await db.schema
        .createIndex("agboss_executions_status_order_idx")
        .on("agboss_executions")
        .columns(["status", "updated_at", "tenant_id", "execution_id"])
        .execute();
      await db.schema.dropIndex("agboss_executions_status_idx").execute();
    },
  },
  {
    // Deadlines of pending pauses (reminders, escalation, expiry): the recovery sweep pages the due ones
    // (status = 'pending' and next_deadline_at <= now, order by next_deadline_at, tenant_id, pause_id)
    // straight from this index, and claims each with a compare-and-set on (next_deadline_at,
    // deadline_reminders), so one instance acts on a deadline, never two.
    name: "pauses-deadlines",
    async up(db) {
      await db.schema.alterTable("agboss_pauses").addColumn("next_deadline_at", "bigint").execute();
      await db.schema
        .alterTable("agboss_pauses")
        .addColumn("deadline_reminders", "integer", (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.alterTable("agboss_pauses").addColumn("expires_at", "bigint").execute();
      await db.schema
        .createIndex("agboss_pauses_deadline_idx")
        .on("agboss_pauses")
        .columns(["status", "next_deadline_at", "tenant_id", "pause_id"])
        .execute();
    },
  },
  {
    // A rowid table keeps its primary key twice: in the table, beside a hidden rowid, and in the index
    // that enforces it. Leases and threads are small rows read by their whole key, one of each per tree,
    // so where the dialect has them (SQLite) they become `without rowid` tables and keep each key once
    // (about 70 bytes less per tree). Each is rebuilt: a new table, its rows copied, the old one dropped.
    name: "leases-threads-without-rowid",
    async up(db, capabilities) {
      if (capabilities.withoutRowid !== true) return;
      const withoutRowid = sql`without rowid`;
      await db.schema
        .createTable("agboss_leases_next")
        .addColumn("key", "text", (c) => c.primaryKey().notNull())
        .addColumn("holder", "text", (c) => c.notNull())
        .addColumn("epoch", "bigint", (c) => c.notNull())
        .addColumn("expires_at", "bigint", (c) => c.notNull())
        .modifyEnd(withoutRowid)
        .execute();
      await sql`insert into agboss_leases_next (key, holder, epoch, expires_at)
        select key, holder, epoch, expires_at from agboss_leases`.execute(db);
      await db.schema.dropTable("agboss_leases").execute();
      await db.schema.alterTable("agboss_leases_next").renameTo("agboss_leases").execute();

      await db.schema
        .createTable("agboss_threads_next")
        .addColumn("tenant_id", "text", (c) => c.notNull())
        .addColumn("thread_id", "text", (c) => c.notNull())
        .addColumn("owner_id", "text", (c) => c.notNull())
        .addColumn("workflow_name", "text", (c) => c.notNull())
        .addColumn("latest_execution_id", "text", (c) => c.notNull())
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .addColumn("updated_at", "bigint", (c) => c.notNull())
        .addPrimaryKeyConstraint("agboss_threads_pk", ["tenant_id", "thread_id"])
        .modifyEnd(withoutRowid)
        .execute();
      await sql`insert into agboss_threads_next
          (tenant_id, thread_id, owner_id, workflow_name, latest_execution_id, created_at, updated_at)
        select tenant_id, thread_id, owner_id, workflow_name, latest_execution_id, created_at, updated_at
        from agboss_threads`.execute(db);
      await db.schema.dropTable("agboss_threads").execute();
      await db.schema.alterTable("agboss_threads_next").renameTo("agboss_threads").execute();
    },
  },
  {
    // Most pauses have no deadline, yet every change of a pause's status rewrote its entry in the
    // deadline index (status is its first column): one page more in each commit that moves a pause.
    // Only pauses with a deadline are in it now; the sweep's query (next_deadline_at <= now) implies
    // that condition, so both dialects still read the due ones straight from the index.
    name: "pauses-deadline-index-partial",
    async up(db) {
      await db.schema.dropIndex("agboss_pauses_deadline_idx").execute();
      await db.schema
        .createIndex("agboss_pauses_deadline_idx")
        .on("agboss_pauses")
        .columns(["status", "next_deadline_at", "tenant_id", "pause_id"])
        .where(sql.ref("next_deadline_at"), "is not", null)
        .execute();
    },
  },
  {
    // The resolved index serves the sweep's answered pauses and retention, both by `resolved_at`, yet it
    // held every waiting pause too (with no `resolved_at`): each new pause wrote a page of it, and at a
    // million waiting pauses it held a million entries no query reads. Only pauses with a `resolved_at`
    // are in it now: both queries compare `resolved_at`, which implies the condition, so both dialects
    // still read them straight from the index.
    name: "pauses-resolved-index-partial",
    async up(db) {
      await db.schema.dropIndex("agboss_pauses_resolved_idx").execute();
      await db.schema
        .createIndex("agboss_pauses_resolved_idx")
        .on("agboss_pauses")
        .columns(["status", "resolved_at", "tenant_id", "pause_id"])
        .where(sql.ref("resolved_at"), "is not", null)
        .execute();
    },
  },
  {
    // A cancelled pause's `next_deadline_at` now says when the recovery sweep tells its channel it is
    // withdrawn (its step may have died inside its channel's `send`), marked as such by its
    // `deadline_reminders`. The deadlines cancelled pauses kept from before owe nothing and no query
    // reads them: they are dropped from the deadline index (a cancel drops them itself from now on).
    name: "pauses-cancelled-deadlines-dropped",
    async up(db) {
      // Through the query builder, so that a schema the store is scoped to applies.
      await (db as Kysely<AgbossDatabase>)
        .updateTable("agboss_pauses")
        .set({ next_deadline_at: null })
        .where("status", "=", "cancelled")
        .where("next_deadline_at", "is not", null)
        .execute();
    },
  },
]);
