import type { SqliteDatabase } from "kysely";

/** The part of a better-sqlite3 `Database` the store uses: kysely's needs plus `pragma`. */
export interface SqliteHandle extends SqliteDatabase {
  /** Runs a pragma, e.g. `journal_mode = WAL`. */
  pragma(source: string, options?: { simple?: boolean }): unknown;
  /** The file the database was opened on (`:memory:` for none). */
  readonly name: string;
  /**
   * Whether a transaction is open on the connection (better-sqlite3 has it). Where a handle does not
   * say, the store reads outside its own write transactions through kysely only.
   */
  readonly inTransaction?: boolean;
  /** Whether the connection is open (better-sqlite3 has it). */
  readonly open?: boolean;
}
