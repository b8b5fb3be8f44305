// The parent's own connection to the store's database, with the drivers the store packages use:
// to watch rows (a pause taken), to read final statuses, to search every table for a tool's receipt,
// and (Postgres) to terminate one worker's backends.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const requireFrom = (pkg: string) => createRequire(join(repo, "packages", pkg, "package.json"));

interface SqliteStatement {
  get(...params: unknown[]): Record<string, unknown> | undefined;
  all(...params: unknown[]): Record<string, unknown>[];
}
interface SqliteDatabase {
  prepare(sql: string): SqliteStatement;
  close(): void;
}
type SqliteConstructor = new (path: string, options?: { timeout?: number }) => SqliteDatabase;

interface PgClient {
  connect(): Promise<void>;
  query(
    text: string,
    params?: unknown[],
  ): Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }>;
  end(): Promise<void>;
  on(event: "error", listener: (error: Error) => void): void;
}
type PgClientConstructor = new (options: { connectionString: string; application_name: string }) => PgClient;

/** An execution row as the parent reads it. */
export interface ExecutionRow {
  readonly status: string;
  readonly error: string | undefined;
}

/** What the parent reads (and, on Postgres, does) in the store's database. */
export interface CrashDatabase {
  readonly kind: "sqlite" | "postgres";
  pauseStatus(tenantId: string, pauseId: string): Promise<string | undefined>;
  execution(tenantId: string, executionId: string): Promise<ExecutionRow | undefined>;
  /** True when some row of some table of the store holds `text` (in a text, JSON or binary column). */
  holds(text: string): Promise<boolean>;
  /** Terminates the backends whose application_name is exactly `applicationName`; returns how many. */
  terminateBackends(applicationName: string): Promise<number>;
  /** The backends connected under exactly `applicationName`. */
  backendsOf(applicationName: string): Promise<number>;
  close(): Promise<void>;
}

function errorOf(record: unknown): string | undefined {
  try {
    const parsed = (typeof record === "string" ? JSON.parse(record) : record) as {
      error?: { name?: string; message?: string; code?: string };
    };
    const error = parsed?.error;
    if (error === undefined || error === null) return undefined;
    return `${error.code ?? error.name ?? "Error"}: ${error.message ?? ""}`;
  } catch {
    return undefined;
  }
}

/** Opens the SQLite file (created by a worker) with better-sqlite3, as the store does. */
export function openSqlite(path: string): CrashDatabase {
  const Database = requireFrom("store-sqlite")("better-sqlite3") as SqliteConstructor;
  const db = new Database(path, { timeout: 5_000 });
  const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;
  return {
    kind: "sqlite",
    async pauseStatus(tenantId, pauseId) {
      const row = db
        .prepare("select status from agboss_pauses where tenant_id = ? and pause_id = ?")
        .get(tenantId, pauseId);
      return row?.status as string | undefined;
    },
    async execution(tenantId, executionId) {
      const row = db
        .prepare("select status, record from agboss_executions where tenant_id = ? and execution_id = ?")
        .get(tenantId, executionId);
      return row === undefined ? undefined : { status: row.status as string, error: errorOf(row.record) };
    },
    async holds(text) {
      const tables = db
        .prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%'")
        .all()
        .map((r) => r.name as string);
      for (const table of tables) {
        const columns = db
          .prepare(`pragma table_info(${quote(table)})`)
          .all()
          .map((c) => c.name as string);
        if (columns.length === 0) continue;
        const where = columns
          .map((c) => `instr(cast(${quote(c)} as blob), cast(? as blob)) > 0`)
          .join(" or ");
        const row = db
          .prepare(`select count(*) as n from ${quote(table)} where ${where}`)
          .get(...columns.map(() => text));
        if (Number(row?.n ?? 0) > 0) return true;
      }
      return false;
    },
    async terminateBackends() {
      throw new Error("SQLite has no backends to terminate");
    },
    async backendsOf() {
      return 0;
    },
    async close() {
      db.close();
    },
  };
}

/** Connects to Postgres with pg, as the store does, under the parent's own application_name. */
export async function openPostgres(
  connectionString: string,
  schema: string,
): Promise<CrashDatabase & { dropSchema(): Promise<void> }> {
  const { Client } = requireFrom("store-postgres")("pg") as { Client: PgClientConstructor };
  const client = new Client({ connectionString, application_name: `crash-suite-parent-${process.pid}` });
  client.on("error", () => undefined);
  await client.connect();
  const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;
  const table = (name: string) => `${quote(schema)}.${quote(name)}`;
  return {
    kind: "postgres",
    async pauseStatus(tenantId, pauseId) {
      const { rows } = await client.query(
        `select status from ${table("agboss_pauses")} where tenant_id = $1 and pause_id = $2`,
        [tenantId, pauseId],
      );
      return rows[0]?.status as string | undefined;
    },
    async execution(tenantId, executionId) {
      const { rows } = await client.query(
        `select status, record from ${table("agboss_executions")} where tenant_id = $1 and execution_id = $2`,
        [tenantId, executionId],
      );
      const row = rows[0];
      return row === undefined ? undefined : { status: row.status as string, error: errorOf(row.record) };
    },
    async holds(text) {
      const { rows } = await client.query(
        "select table_name, column_name, data_type from information_schema.columns where table_schema = $1",
        [schema],
      );
      const byTable = new Map<string, { name: string; type: string }[]>();
      for (const row of rows) {
        const list = byTable.get(row.table_name as string) ?? [];
        list.push({ name: row.column_name as string, type: row.data_type as string });
        byTable.set(row.table_name as string, list);
      }
      for (const [name, columns] of byTable) {
        const where = columns
          .map((c) =>
            c.type === "bytea"
              ? `position(convert_to($1, 'UTF8') in ${quote(c.name)}) > 0`
              : `strpos(${quote(c.name)}::text, $1) > 0`,
          )
          .join(" or ");
        const result = await client.query(`select count(*)::int as n from ${table(name)} where ${where}`, [
          text,
        ]);
        if (Number(result.rows[0]?.n ?? 0) > 0) return true;
      }
      return false;
    },
    async terminateBackends(applicationName) {
      const { rows } = await client.query(
        "select pg_terminate_backend(pid) as done from pg_stat_activity where application_name = $1 and pid <> pg_backend_pid()",
        [applicationName],
      );
      return rows.filter((r) => r.done === true).length;
    },
    async backendsOf(applicationName) {
      const { rows } = await client.query(
        "select count(*)::int as n from pg_stat_activity where application_name = $1",
        [applicationName],
      );
      return Number(rows[0]?.n ?? 0);
    },
    async dropSchema() {
      await client.query(`drop schema if exists ${quote(schema)} cascade`);
    },
    async close() {
      await client.end();
    },
  };
}
