import type { StoreFactory } from "@agboss/core";
import { SqliteStore } from "./sqlite-store.js";
import type { SqliteStoreOptions } from "./sqlite-store-options.js";

/**
 * A store factory for `createApp`: opens a {@link SqliteStore} named after the application unless a
 * `path` or `AGBOSS_SQLITE_PATH` says otherwise. The application closes it on `app.close()`.
 *
 * @example
 * const app = await createApp(App, { store: sqliteStore({ path: "./data/app.sqlite" }) });
 */
export function sqliteStore(options: SqliteStoreOptions = {}): StoreFactory {
  return (context) => SqliteStore.open({ appName: context.appName, ...options });
}
