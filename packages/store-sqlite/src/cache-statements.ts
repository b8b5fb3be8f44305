import type { SqliteDatabase, SqliteStatement } from "kysely";

/** How many distinct statements a store keeps prepared; the store's own queries need far fewer. */
export const STATEMENT_CACHE_SIZE = 256;

/**
 * Wraps a database so that `prepare` hands back the statement it prepared last time for the same SQL
 * text, keeping the `capacity` most recently used. kysely's SQLite driver prepares every query it runs;
 * the store runs a few dozen distinct statements over and over. Safe because kysely runs one query at
 * a time on the connection, so a cached statement is never re-entered while it iterates. @internal
 */
export function cacheStatements(database: SqliteDatabase, capacity = STATEMENT_CACHE_SIZE): SqliteDatabase {
  const statements = new Map<string, SqliteStatement>();
  return {
    close: () => {
      statements.clear();
      database.close();
    },
    prepare: (sql) => {
      const cached = statements.get(sql);
      if (cached !== undefined) {
        statements.delete(sql);
        statements.set(sql, cached);
        return cached;
      }
      const statement = database.prepare(sql);
      statements.set(sql, statement);
      if (statements.size > capacity) {
        const oldest = statements.keys().next();
        if (oldest.done !== true) statements.delete(oldest.value);
      }
      return statement;
    },
  };
}
