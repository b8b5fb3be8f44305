import { StoreUnavailableError } from "../errors/app-errors.js";
import type { StoreFactory } from "../store/store.js";

const SQLITE_PACKAGE = "@agboss/store-sqlite";

/**
 * The store used when none is configured: the embedded SQLite store, at `AGBOSS_SQLITE_PATH` or
 * `./.agboss/data/<application name>.sqlite`. It needs `@agboss/store-sqlite` installed.
 * @internal
 */
export async function defaultStoreFactory(): Promise<StoreFactory> {
  let module: { sqliteStore?: () => StoreFactory };
  try {
    module = (await import(/* @vite-ignore */ SQLITE_PACKAGE)) as typeof module;
  } catch (error) {
    throw new StoreUnavailableError(
      `No store is configured and ${SQLITE_PACKAGE} is not installed. Install it (pnpm add ${SQLITE_PACKAGE}) ` +
        "or pass createApp(App, { store }).",
      { cause: error },
    );
  }
  if (typeof module.sqliteStore !== "function") {
    throw new StoreUnavailableError(
      `${SQLITE_PACKAGE} does not export sqliteStore(); update it to match @agboss/core.`,
    );
  }
  return module.sqliteStore();
}
