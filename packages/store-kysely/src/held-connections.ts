import { CompiledQuery, type Kysely, type QueryResult } from "kysely";
import type { AgbossDatabase } from "./schema/agboss-database.js";

/**
 * Runs one statement at once and returns its result: for a driver that answers synchronously on one
 * connection (better-sqlite3), the same work kysely's driver does, without the promises around it.
 * Throws what the driver throws.
 */
export type SyncStatements = (sql: string, parameters: readonly unknown[]) => QueryResult<unknown>;

/** The connections write transactions hold right now, with the runner for each. */
const held = new WeakMap<Kysely<AgbossDatabase>, SyncStatements>();

/**
 * A store's read instance whose statements may run at once on a synchronous driver while no write
 * transaction holds the connection (see {@link readAtOnce}).
 */
const readers = new WeakMap<
  Kysely<AgbossDatabase>,
  { readonly statements: SyncStatements; readonly busy: () => boolean }
>();

/**
 * Lets statements run on `reads` (a store's read instance over one connection of a synchronous driver)
 * go straight to `statements` while `busy()` says no: no transaction is open or about to be on that
 * connection (they read what is committed, as they would through kysely, without its driver's
 * promises), or the open one may be read (see `WriteTransactions.readsThrough`). Otherwise they go
 * through kysely and wait for the transaction to end. @internal
 */
export function readAtOnce(
  reads: Kysely<AgbossDatabase>,
  statements: SyncStatements,
  busy: () => boolean,
): void {
  readers.set(reads, { statements, busy });
}

/**
 * Marks `connection` (the kysely instance a write transaction runs on) as held by the caller until
 * {@link letGo}: statements given to {@link runOn} with it run at once through `statements`. Only for
 * a connection nothing else can use meanwhile: kysely hands it to one transaction at a time, and a
 * synchronous driver runs each statement to its end before anything else runs. @internal
 */
export function hold(connection: Kysely<AgbossDatabase>, statements: SyncStatements): void {
  held.set(connection, statements);
}

/** Ends {@link hold}: the connection's statements go through kysely again. @internal */
export function letGo(connection: Kysely<AgbossDatabase>): void {
  held.delete(connection);
}

/**
 * Runs a compiled statement on `db`: at once where `db` is a held connection of a synchronous driver
 * (see {@link hold}), else through kysely. Either way the result, or the driver's error, comes back
 * as a promise. @internal
 */
export function runOn<TRow>(
  db: Kysely<AgbossDatabase>,
  sql: string,
  parameters: readonly unknown[],
): Promise<QueryResult<TRow>> {
  const statements = held.get(db);
  if (statements === undefined) {
    const reader = readers.get(db);
    if (reader !== undefined && !reader.busy()) {
      try {
        return Promise.resolve(reader.statements(sql, parameters) as QueryResult<TRow>);
      } catch {
        // Whatever failed is run again through kysely, which retries a transient fault and reports
        // any other as it always has.
      }
    }
    return db.executeQuery<TRow>(CompiledQuery.raw(sql, parameters as unknown[]));
  }
  try {
    return Promise.resolve(statements(sql, parameters) as QueryResult<TRow>);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** {@link runOn} for a statement compiled ahead (`begin`, `commit`, a savepoint). @internal */
export function runCompiledOn(
  db: Kysely<AgbossDatabase>,
  query: CompiledQuery,
): Promise<QueryResult<unknown>> {
  return held.has(db) ? runOn(db, query.sql, query.parameters) : db.executeQuery(query);
}
