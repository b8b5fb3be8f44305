import type { CreateAppOptions } from "@agboss/core";
import type { TestStoreFactory } from "./test-store-factory.js";

/** Options of `testWith` and {@link TestKit}. */
export interface TestKitOptions {
  /** The store of each test. Default: a fresh in-memory store (`memoryStore()` from `@agboss/core`). */
  readonly store?: TestStoreFactory;
  /** Providers added to (or replacing) the application's, e.g. a test implementation of a channel. */
  readonly providers?: CreateAppOptions["providers"];
  /** `executionContext.env` of the apps. Default `test`. */
  readonly env?: string;
  /**
   * How many apps (instances) `testWith` opens for each test, all over the same store and clock: the
   * `apps` fixture; `app` is the first. Default 1. `openApp` opens more during the test.
   */
  readonly instances?: number;
  /** Where the test clock starts, in epoch ms. Default 2026-01-01T00:00:00.000Z. */
  readonly clockStart?: number;
}
