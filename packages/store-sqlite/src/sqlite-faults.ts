import { StoreFault } from "@agboss/store-kysely";

/**
 * Which errors of better-sqlite3 are transient, for the kysely store's retries: `SQLITE_BUSY` and its
 * extended codes (another connection holds the lock past the busy timeout, a WAL snapshot that went
 * stale, a recovery under way) and `SQLITE_LOCKED` (a table lock within the same database). SQLite
 * refuses the statement, or the COMMIT, and a transaction it refused is rolled back by the store, so
 * running it again is safe. Anything else, a constraint violation or `LeaseLostError`, is not retried.
 */
export function sqliteFaultOf(error: unknown): StoreFault | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== "string") return undefined;
  return /^SQLITE_(BUSY|LOCKED)(_[A-Z]+)?$/.test(code) ? StoreFault.Contention : undefined;
}
