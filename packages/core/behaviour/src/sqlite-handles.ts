import type { SqliteHandle } from "@agboss/store-sqlite";
import Database from "better-sqlite3";
import { sqliteFile } from "./backends.js";

/**
 * A better-sqlite3 handle on a fresh file, for `SqliteStore.open({ database })`, that calls `before` each
 * time a `commit` is about to run: to count commits, or to throw as a failing disk would (the commit then
 * does not run, and the store rolls the transaction back).
 */
export function onEachCommit(before: () => void): SqliteHandle {
  const db = new Database(sqliteFile());
  return {
    name: db.name,
    pragma: (source: string, options?: { simple?: boolean }) => db.pragma(source, options),
    close: () => db.close(),
    prepare: (sql: string) => {
      const statement = db.prepare(sql);
      if (sql.trim().toLowerCase() !== "commit") return statement;
      return {
        reader: statement.reader,
        all: (parameters: readonly unknown[]) => statement.all(...parameters),
        run: (parameters: readonly unknown[]) => {
          before();
          return statement.run(...parameters);
        },
      };
    },
  } as unknown as SqliteHandle;
}
