import type { StoreDialectCapabilities } from "@agboss/store-kysely";
import { sqliteFaultOf } from "./sqlite-faults.js";

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
  // Leases and threads keep their text keys once (see the `leases-threads-without-rowid` migration).
  withoutRowid: true,
  // Not `json_each`: on a local file the checkpoint, its values and its writes read apart (three indexed
  // lookups, about 50 µs) beat one statement that expands the origins with `json_each` (about 90 µs).
  // A lock another connection holds (busy, locked) is retried with backoff that does not block the thread.
  faultOf: sqliteFaultOf,
});
