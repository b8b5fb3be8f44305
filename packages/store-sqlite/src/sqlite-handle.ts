import type { SqliteDatabase } from "kysely";

/** The part of a better-sqlite3 `Database` the store uses: kysely's needs plus `pragma`. */
export interface SqliteHandle extends SqliteDatabase {
  /** Runs a pragma, e.g. `journal_mode = WAL`. */
  pragma(source: string, options?: { simple?: boolean }): unknown;
  /** The file the database was opened on (`:memory:` for none). */
  readonly name: string;
}
