import type { AnyClass, App, MemoryLogger, Store } from "@agboss/core";
import type { MockedInstance } from "./mocked-instance.js";
import type { ModelScript } from "./model-script.js";
import type { TestClock } from "./test-clock.js";
import type { TestKit } from "./test-kit.js";

/** The fixtures a `testWith(App)` test receives. Each test gets its own store, clock and apps. */
export interface AgbossFixtures {
  /** The application, created on a fresh store before the test and closed after it. */
  app: App;
  /**
   * The test's instances: `testWith(App, { instances: N })` gives N apps over the same store and clock,
   * as N processes would be (`apps[0]` is `app`). One (`[app]`) by default.
   */
  apps: App[];
  /**
   * Opens another app over the same store and clock, as another process or a restart would; closed
   * after the test. A test that pauses resumes on it to prove nothing was kept in memory.
   */
  openApp: () => Promise<App>;
  /** The scripted model of an agent or model reply interpreter, on every app of the test. */
  mockLlm: (component: AnyClass) => ModelScript;
  /** The app's instance of a class (or of a contract's provider) with every method spied. */
  mockOf: <T>(cls: AnyClass<T>) => MockedInstance<T>;
  /** The application's Clock; only `clock.advance(…)` moves it. */
  clock: TestClock;
  /** The log of every app of the test (`logger.entries`). */
  logger: MemoryLogger;
  /** The store every app of the test shares. */
  store: Store;
  /** Everything above, as one object. */
  kit: TestKit;
}
