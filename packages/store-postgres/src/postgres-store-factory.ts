import type { StoreFactory } from "@agboss/core";
import { PostgresStore } from "./postgres-store.js";
import type { PostgresStoreOptions } from "./postgres-store-options.js";

/**
 * A store factory for `createApp`: opens a {@link PostgresStore} on `connectionString` (or
 * `AGBOSS_POSTGRES_URL`, or the given `pool`). The application closes it on `app.close()`.
 *
 * @example
 * const app = await createApp(App, {
 *   store: postgresStore({ connectionString: process.env.DATABASE_URL, schema: "refunds" }),
 * });
 */
export function postgresStore(options: PostgresStoreOptions = {}): StoreFactory {
  return (context) =>
    PostgresStore.open({
      appName: context.appName,
      logger: context.logger,
      clock: context.clock,
      ...options,
    });
}
