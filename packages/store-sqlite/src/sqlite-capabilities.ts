import type { StoreDialectCapabilities } from "@agboss/store-kysely";

/** SQLite as the kysely store sees it. */
export const SQLITE_CAPABILITIES: StoreDialectCapabilities = Object.freeze({
  // A plain `begin` takes the write lock at the first write; two connections upgrading at once deadlock.
  beginWriteTransaction: "begin immediate",
  lockRowsForUpdate: false,
  supportsReturning: true,
  blobType: "blob",
  lockDatabaseForMigrations: true,
  // One connection writes at a time anyway; sharing a commit saves a disk sync per queued transaction.
  groupCommit: true,
});
