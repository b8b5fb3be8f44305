import type { Store } from "@agboss/core";

/** What each group of cases is given by the suite. @internal */
export interface ConformanceContext {
  /** The store under test in the running case. */
  store(): Store;
  /** Declares a case; skipped, with its reason, when the options list it. */
  test(name: string, body: () => Promise<void>): void;
  /** Declares a case run against the store and a peer over the same data; skipped without `createPeer`. */
  peerTest(name: string, body: (peer: Store) => Promise<void>): void;
}
