import type { SyncStatements } from "@agboss/store-kysely";
import type { SqliteDatabase } from "kysely";

/**
 * A statement run at once on the connection, as kysely's SQLite driver runs it (a reader's rows, or a
 * write's changes), for the store's write transactions to skip the driver's promises. @internal
 */
export function syncStatementsOf(database: SqliteDatabase): SyncStatements {
  return (sql, parameters) => {
    const statement = database.prepare(sql);
    if (statement.reader) return { rows: statement.all(parameters) };
    const { changes, lastInsertRowid } = statement.run(parameters);
    return {
      insertId:
        lastInsertRowid === undefined || lastInsertRowid === null ? undefined : BigInt(lastInsertRowid),
      numAffectedRows: changes === undefined || changes === null ? undefined : BigInt(changes),
      rows: [],
    };
  };
}
