import Database from "better-sqlite3";
import type { SqliteHandle } from "../src/index.js";

/**
 * A better-sqlite3 handle on `path` for `SqliteStore.open({ database })` whose statement `text` (e.g.
 * `commit`; or each statement `text` accepts) calls `before` with its text each time it is about to run: to count it,
 * or to throw as a failing disk or a held lock would (the statement then does not run). Returns the
 * handle and the connection under it.
 */
export function interceptStatement(
  path: string,
  text: string | ((sql: string) => boolean),
  before: (sql: string) => void,
): { handle: SqliteHandle; db: Database.Database } {
  const intercepted = typeof text === "string" ? (sql: string) => sql.trim().toLowerCase() === text : text;
  const db = new Database(path);
  const handle = {
    name: db.name,
    pragma: (source: string, options?: { simple?: boolean }) => db.pragma(source, options),
    close: () => db.close(),
    // As on a real handle: the store's reads may then run at once.
    get inTransaction() {
      return db.inTransaction;
    },
    prepare: (sql: string) => {
      const statement = db.prepare(sql);
      if (!intercepted(sql)) return statement;
      return {
        reader: statement.reader,
        all: (parameters: readonly unknown[]) => {
          before(sql);
          return statement.all(...parameters);
        },
        run: (parameters: readonly unknown[]) => {
          before(sql);
          return statement.run(...parameters);
        },
      };
    },
  } as unknown as SqliteHandle;
  return { handle, db };
}
