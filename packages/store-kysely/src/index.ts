export { KyselyCheckpointSaver } from "./checkpoint/kysely-checkpoint-saver.js";
export { TURN_AT_LEAST_EVERY_MS } from "./commit-turns.js";
export type { SyncStatements } from "./held-connections.js";
export { KyselyStore, type KyselyStoreConfig } from "./kysely-store.js";
export {
  type MigrateStoreOptions,
  migrateStore,
  STORE_MIGRATION_LOCK_TABLE,
  STORE_MIGRATION_TABLE,
} from "./migrations/migrate-store.js";
export type { StoreMigration } from "./migrations/store-migration.js";
export { StoreMigrationProvider } from "./migrations/store-migration-provider.js";
export { STORE_MIGRATIONS } from "./migrations/store-migrations.js";
export { KyselyBudgetLedgerRepository } from "./repositories/kysely-budget-ledger-repository.js";
export { KyselyExecutionRecordRepository } from "./repositories/kysely-execution-record-repository.js";
export { KyselyLeaseRepository } from "./repositories/kysely-lease-repository.js";
export { KyselyPausedExecutionRepository } from "./repositories/kysely-paused-execution-repository.js";
export { KyselyThreadRepository } from "./repositories/kysely-thread-repository.js";
export type * from "./schema/agboss-database.js";
export {
  type JsonObjectEntries,
  markCommitInFlight,
  markHeldRefused,
  markNotSent,
  type StoreDialectCapabilities,
} from "./store-dialect-capabilities.js";
export {
  DEFAULT_STORE_RETRY,
  StoreFault,
  type StoreRetryOptions,
  type StoreRetryPolicy,
  storeRetryPolicy,
} from "./store-faults.js";
export { createSerialWriteGate, openWriteGate, type WriteGate } from "./write-gate.js";
export type { StoreDatabase } from "./write-transactions.js";
