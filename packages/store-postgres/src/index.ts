export { POSTGRES_CAPABILITIES } from "./postgres-capabilities.js";
export { postgresFaultOf } from "./postgres-faults.js";
export { POSTGRES_URL_ENV, PostgresStore } from "./postgres-store.js";
export { postgresStore } from "./postgres-store-factory.js";
export type { PostgresStoreOptions } from "./postgres-store-options.js";
