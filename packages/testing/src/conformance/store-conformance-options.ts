import type { Store } from "@agboss/core";

/** Cases a store leaves out, and why. */
export interface StoreConformanceSkip {
  /** Why the store cannot pass these cases; shown in the test name. */
  readonly reason: string;
  /** The names of the skipped cases, as the suite prints them. */
  readonly tests: readonly string[];
}

/** How {@link describeStoreConformance} opens and disposes of the store under test. */
export interface StoreConformanceOptions {
  /** The store's name in the test output. */
  readonly name: string;
  /** Opens an empty, migrated store; called before every case. */
  createStore(): Promise<Store>;
  /** Closes the store and removes what it wrote; called after every case. */
  destroyStore(store: Store): Promise<void>;
  /**
   * Opens a second store over the same data, as another process would (e.g. a second connection to
   * the same file). When given, the race and takeover cases also run across two instances; the suite
   * closes the peer itself.
   */
  readonly createPeer?: (store: Store) => Promise<Store>;
  /** Cases this store leaves out, each with a reason. */
  readonly skip?: readonly StoreConformanceSkip[];
}
