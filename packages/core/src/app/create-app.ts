import { assemble } from "../assembly/assemble.js";
import type { ApplicationOptions } from "../components/application.js";
import { type AnyClass, componentOf } from "../container/component-registry.js";
import { Container } from "../container/container.js";
import { CLOCK, LOGGER } from "../container/well-known-tokens.js";
import type { ExecutionEvents } from "../execution/execution-events.js";
import { ConsoleLogger, type Logger, LogLevel } from "../logging/logger.js";
import { ModelRegistry } from "../models/model-registry.js";
import { Followers } from "../services/followers.js";
import { loadInterpreterPrompts } from "../services/interpreter-prompts.js";
import { loadTracing } from "../services/tracing.js";
import type { Store, StoreFactory } from "../store/store.js";
import { type Clock, SystemClock } from "../time/clock.js";
import { hours, toMilliseconds } from "../time/duration.js";
import { App } from "./app.js";
import { defaultStoreFactory } from "./default-store.js";

/** Options of {@link createApp}. */
export interface CreateAppOptions {
  /** The deployment, e.g. `dev` or `prod`; readable as `executionContext.env`. Default `AGBOSS_ENV`, else `dev`. */
  readonly env?: string;
  /** The store; overrides `@Application({ store })`. Default: the embedded SQLite store. */
  readonly store?: StoreFactory | Store;
  /** The application's time. Default: the wall clock. */
  readonly clock?: Clock;
  /** Where logs go. Default: warnings and errors to the console. */
  readonly logger?: Logger;
  /** Providers added to (or replacing) the application's, e.g. a different channel in tests. */
  readonly providers?: ApplicationOptions["providers"];
  /**
   * Report OpenTelemetry spans (an execution's pass, each step, model and tool call, each pause's ask,
   * answer and withdrawal) through `@opentelemetry/api`, when the application has it installed.
   * Default `true`; without the package nothing is loaded or built.
   */
  readonly tracing?: boolean;
  /** @internal Used by the testing kit: every model id counts as served. */
  readonly modelsScripted?: boolean;
}

/**
 * Assembles the application, checks every rule at once, opens its store, creates its container
 * (`onInit` then `onStart`), and starts the 30-second recovery sweep. Call it once per process.
 *
 * @example
 * const app = await createApp(RefundApplication, { env: "prod", store: sqliteStore({ path: "/var/lib/refunds.sqlite" }) });
 */
export async function createApp(application: AnyClass, options: CreateAppOptions = {}): Promise<App> {
  const clock = options.clock ?? new SystemClock();
  const logger = options.logger ?? new ConsoleLogger({ level: LogLevel.Warn });
  const appOptions = componentOf<ApplicationOptions>(application)?.options;
  const container = new Container([
    { provide: CLOCK, useValue: clock },
    { provide: LOGGER, useValue: logger },
    ...(appOptions?.providers ?? []),
    ...(options.providers ?? []),
  ]);
  const assembled = assemble(application, container, { modelsScripted: options.modelsScripted === true });
  const configured = options.store ?? assembled.options.store ?? (await defaultStoreFactory());
  const ownsStore = typeof configured === "function";
  const store =
    typeof configured === "function"
      ? await configured({ appName: assembled.name, clock, logger })
      : configured;
  const models = new ModelRegistry(container, assembled.modelProviders);
  const interpreterPrompts = await loadInterpreterPrompts(assembled).catch(async (error: unknown) => {
    if (ownsStore) await store.close();
    throw error;
  });
  try {
    await container.start();
  } catch (error) {
    if (ownsStore) await store.close();
    throw error;
  }
  const events = container.get(application) as ExecutionEvents;
  const env = options.env ?? process.env.AGBOSS_ENV ?? "dev";
  const tracing = options.tracing === false ? undefined : await loadTracing();
  const app = new App({
    internals: {
      container,
      models,
      clock,
      logger,
      store,
      assembled,
      env,
      interpreterPrompts,
      tracing,
      followers: new Followers(),
    },
    ownsStore,
    events,
  });
  app.startSweep(toMilliseconds(assembled.options.pauseRecordRetention ?? hours(24)));
  return app;
}
