import type { PostgresServer } from "./postgres.js";
import { quote } from "./postgres.js";

// Bulk copies of one real paused tree, straight in SQL: every row the tree left in a database (AGBoss's
// store or a LangGraph checkpointer's tables) is copied `count` times, each id of the tree in a text
// column given the copy's number, binary and JSON columns as they are. So each copy is as large as the
// real tree, and a million of them take minutes instead of hours of executions.

/** The better-sqlite3 calls a SQLite target needs (the bench does not need its type package). */
export interface SqliteHandleLike {
  exec(sql: string): unknown;
  prepare(sql: string): { all(...params: unknown[]): unknown[] };
}

/** One database the copies go into, and how to read its size. */
export interface CopyTarget {
  readonly dialect: "sqlite" | "postgres";
  /** The name to write in SQL for `table` (schema-qualified on Postgres). */
  table(name: string): string;
  exec(sql: string): Promise<void>;
  rows<T>(sql: string): Promise<T[]>;
  tables(): Promise<string[]>;
  columns(table: string): Promise<{ name: string; text: boolean }[]>;
  /** The bytes each table (its rows, indexes and, on Postgres, TOAST) takes in the database itself. */
  bytesByTable(): Promise<Record<string, number>>;
}

export function sqliteTarget(db: SqliteHandleLike): CopyTarget {
  const all = <T>(sql: string) => db.prepare(sql).all() as T[];
  return {
    dialect: "sqlite",
    table: (name) => quote(name),
    exec: async (sql) => {
      db.exec(sql);
    },
    rows: async (sql) => all(sql),
    tables: async () =>
      all<{ name: string }>(
        "select name from sqlite_master where type = 'table' and name not like 'sqlite_%'",
      ).map((r) => r.name),
    columns: async (table) =>
      all<{ name: string; type: string }>(`pragma table_info(${quote(table)})`).map((c) => ({
        name: c.name,
        text: /text|char/i.test(c.type),
      })),
    // dbstat: the pages each table and index uses; an index counts for its table.
    bytesByTable: async () => {
      const owners = new Map(
        all<{ name: string; tbl_name: string }>("select name, tbl_name from sqlite_master").map((r) => [
          r.name,
          r.tbl_name,
        ]),
      );
      const out: Record<string, number> = {};
      for (const row of all<{ name: string; bytes: number }>(
        "select name, sum(pgsize) as bytes from dbstat group by name",
      )) {
        const table = owners.get(row.name) ?? row.name;
        out[table] = (out[table] ?? 0) + Number(row.bytes);
      }
      return out;
    },
  };
}

export function postgresTarget(server: PostgresServer, schema: string): CopyTarget {
  const rows = async <T>(sql: string) => (await server.query(sql)).rows as T[];
  const literal = `'${schema.replace(/'/g, "''")}'`;
  return {
    dialect: "postgres",
    table: (name) => `${quote(schema)}.${quote(name)}`,
    exec: async (sql) => {
      await server.query(sql);
    },
    rows,
    tables: async () =>
      (
        await rows<{ table_name: string }>(
          `select table_name from information_schema.tables where table_schema = ${literal} and table_type = 'BASE TABLE'`,
        )
      ).map((r) => r.table_name),
    columns: async (table) =>
      (
        await rows<{ column_name: string; data_type: string }>(
          `select column_name, data_type from information_schema.columns
           where table_schema = ${literal} and table_name = '${table}' order by ordinal_position`,
        )
      ).map((c) => ({ name: c.column_name, text: /^(text|character varying)$/.test(c.data_type) })),
    bytesByTable: async () => {
      const out: Record<string, number> = {};
      for (const row of await rows<{ relname: string; bytes: string }>(
        `select c.relname, pg_total_relation_size(c.oid) as bytes from pg_class c
         join pg_namespace n on n.oid = c.relnamespace where n.nspname = ${literal} and c.relkind = 'r'`,
      ))
        out[row.relname] = Number(row.bytes);
      return out;
    },
  };
}

const lit = (text: string) => `'${text.replace(/'/g, "''")}'`;

/** A tree's rows kept aside once, so every batch copies from a few rows instead of searching the table. */
export class TreeTemplate {
  private constructor(
    private readonly target: CopyTarget,
    private readonly ids: readonly string[],
    private readonly tables: readonly { name: string; columns: { name: string; text: boolean }[] }[],
  ) {}

  /**
   * Keeps every row of `tables` (default: all but `skip`) that holds one of `ids` in a text column.
   * `ids` should be what makes the tree's rows unique (its thread, execution and pause ids).
   */
  static async take(
    target: CopyTarget,
    ids: readonly string[],
    skip: (table: string) => boolean,
  ): Promise<TreeTemplate> {
    const tables: { name: string; columns: { name: string; text: boolean }[] }[] = [];
    for (const name of await target.tables()) {
      if (skip(name)) continue;
      const columns = await target.columns(name);
      const textColumns = columns.filter((c) => c.text);
      if (textColumns.length === 0) continue;
      const matches = textColumns
        .flatMap((c) => ids.map((id) => `${quote(c.name)} like ${lit(`%${id}%`)}`))
        .join(" or ");
      const copy = quote(`copy_${name}`);
      await target.exec(`drop table if exists ${copy}`);
      await target.exec(
        `create temporary table ${copy} as select * from ${target.table(name)} where ${matches}`,
      );
      const [count] = await target.rows<{ n: number | string }>(`select count(*) as n from ${copy}`);
      if (Number(count?.n ?? 0) > 0) tables.push({ name, columns });
    }
    return new TreeTemplate(target, ids, tables);
  }

  /** How many rows one copy of the tree writes, by table. */
  get tableNames(): readonly string[] {
    return this.tables.map((t) => t.name);
  }

  /** Writes copies `from` … `to - 1` (one statement per table; each its own transaction). */
  async copy(from: number, to: number): Promise<void> {
    for (const t of this.tables) {
      const columns = t.columns.map((c) => quote(c.name)).join(", ");
      const values = t.columns
        .map((c) => {
          let expr = quote(c.name);
          if (c.text)
            for (const id of this.ids) expr = `replace(${expr}, ${lit(id)}, ${lit(`${id}.`)} || n.i)`;
          return expr;
        })
        .join(", ");
      await this.target.exec(
        `with recursive n(i) as (select ${from} union all select i + 1 from n where i < ${to - 1})
         insert into ${this.target.table(t.name)} (${columns})
         select ${values} from ${quote(`copy_${t.name}`)} cross join n`,
      );
    }
  }
}
