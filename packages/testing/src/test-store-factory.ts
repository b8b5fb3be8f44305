import type { Store, StoreContext, StoreFactory } from "@agboss/core";

/**
 * Opens the store of one test: a {@link Store}, or a `StoreFactory` the kit then calls. It is called
 * once per test, so return a fresh one (a new SQLite file, a new schema); the kit closes it after the
 * test, once every app of the test is closed.
 *
 * @example
 * testWith(RefundApplication, { store: () => sqliteStore({ path: join(mkdtempSync(join(tmpdir(), "t-")), "db.sqlite") }) })
 */
export type TestStoreFactory = (
  context: StoreContext,
) => Store | StoreFactory | Promise<Store | StoreFactory>;
