export { SQLITE_CAPABILITIES } from "./sqlite-capabilities.js";
export { sqliteFaultOf } from "./sqlite-faults.js";
export type { SqliteHandle } from "./sqlite-handle.js";
export { SQLITE_PATH_ENV, SqliteStore } from "./sqlite-store.js";
export { sqliteStore } from "./sqlite-store-factory.js";
export type { SqliteStoreOptions } from "./sqlite-store-options.js";
export { SqliteSynchronous } from "./sqlite-synchronous.js";
export { SqliteWalCheckpoints } from "./wal-checkpoints.js";
