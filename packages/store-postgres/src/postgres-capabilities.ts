import type { StoreDialectCapabilities } from "@agboss/store-kysely";
import { postgresFaultOf } from "./postgres-faults.js";

/** PostgreSQL as the kysely store sees it. */
export const POSTGRES_CAPABILITIES: StoreDialectCapabilities = Object.freeze({
  // Named rather than left to the server's default: under `serializable` a lock wait would surface as a
  // serialization failure, while the store's writes are already made safe by row locks and conditional updates.
  beginWriteTransaction: "begin isolation level read committed",
  // The fence check locks the lease row, so a takeover cannot commit between the check and the write.
  lockRowsForUpdate: true,
  supportsReturning: true,
  blobType: "bytea",
  // kysely's Postgres adapter takes an advisory lock around the migrations.
  lockDatabaseForMigrations: false,
  // A pool runs transactions side by side; nothing is gained by queueing them behind one another.
  groupCommit: false,
  // A checkpoint write, its fence check and its deletes go to the server as one statement.
  writableCtes: true,
  jsonObjectEntries: "jsonb_each_text",
  // Answered by the store's pool view (`prepared-statements.ts`), which commits behind the next statement.
  commitWithNextStatement: "-- agboss: commit with the next statement",
  // Read by the same view, which sends such a statement in front of the transaction's next one.
  deferUnreadStatement: "/* agboss: result not read */ ",
  // Lost connections, serialization failures, deadlocks and a full server are retried where safe.
  faultOf: postgresFaultOf,
});
