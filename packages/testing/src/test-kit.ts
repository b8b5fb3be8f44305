import {
  type AnyClass,
  type App,
  ComponentKind,
  componentOf,
  createApp,
  DecidedBy,
  MemoryLogger,
  memoryStore,
  type Provider,
  type Store,
  type StoreContext,
} from "@agboss/core";
import { appInternals } from "@agboss/core/internal";
import { type MockInstance, vi } from "vitest";
import { componentLabel } from "./component-label.js";
import type { MockedInstance } from "./mocked-instance.js";
import { ModelScript } from "./model-script.js";
import { TestClock } from "./test-clock.js";
import type { TestKitOptions } from "./test-kit-options.js";
import { TestSetupError } from "./test-setup-error.js";
import { UnscriptedModelError } from "./unscripted-model-error.js";

type Spies = Map<string, MockInstance>;

const MODEL_CALLERS: readonly string[] = [ComponentKind.Agent, ComponentKind.ReplyInterpreter];

/**
 * Stand-ins for the application's own `@ModelProvider`s: in a test every model answers from its
 * `mockLlm` script, so a provider is neither created nor started (no API key read, no client opened).
 * Its `serves` and `decides` still count, e.g. whether an interpreter asks a decision model.
 */
function modelProviderStandIns(application: AnyClass): Provider[] {
  const providers = componentOf<{ providers?: readonly Provider[] }>(application)?.options.providers ?? [];
  const standIns: Provider[] = [];
  for (const provider of providers) {
    const token = typeof provider === "function" ? provider : provider.provide;
    if (componentOf(token)?.kind !== ComponentKind.ModelProvider) continue;
    const refuse = () => {
      throw new TestSetupError(
        `${componentLabel(token as AnyClass)} is a model provider, which a test does not use: script the ` +
          "component's model with mockLlm(Component).thenReturn(…).",
      );
    };
    standIns.push({ provide: token, useValue: Object.freeze({ chatModel: refuse, decisionModel: refuse }) });
  }
  return standIns;
}

/**
 * Every method of an instance, most derived first, without `constructor`: its prototype chain's, and
 * its own function-valued properties (a `useValue` provider's methods).
 */
function methodNames(instance: object): string[] {
  const names = new Set<string>();
  for (let o: object | null = instance; o !== null && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    for (const name of Object.getOwnPropertyNames(o)) {
      if (name === "constructor" || names.has(name)) continue;
      const descriptor = Object.getOwnPropertyDescriptor(o, name);
      if (typeof descriptor?.value === "function" && descriptor.configurable !== false) names.add(name);
    }
  }
  return [...names];
}

/**
 * The world of one test: a {@link TestClock}, a {@link MemoryLogger}, one store, and every app opened on
 * them, with `mockLlm` scripts and `mockOf` spies that apply to all of those apps. `testWith` makes one
 * per test; use it directly outside vitest fixtures.
 *
 * @example
 * await using kit = new TestKit(RefundApplication);
 * const app = await kit.app();
 * kit.mockLlm(RefundAgent).thenReturn(replyWith("done"));
 * const again = await kit.openApp(); // a second process over the same store
 * const [one, two] = await new TestKit(RefundApplication, { instances: 2 }).apps(); // two at once
 */
export class TestKit {
  /** The clock every app of the kit runs on. */
  readonly clock: TestClock;
  /** Where every app of the kit logs. */
  readonly logger = new MemoryLogger();
  readonly #application: AnyClass;
  readonly #options: TestKitOptions;
  readonly #apps: App[] = [];
  readonly #scripts = new Map<AnyClass, ModelScript>();
  /** Spies by the first app's instance, and the classes they were asked for. */
  readonly #spies = new Map<object, Spies>();
  readonly #mockedClasses = new Map<AnyClass, object>();
  readonly #modelProviderStandIns: Provider[];
  #store: Promise<Store> | undefined;
  #first: Promise<App> | undefined;
  #instances: Promise<App[]> | undefined;
  #closed = false;

  constructor(application: AnyClass, options: TestKitOptions = {}) {
    const { instances } = options;
    if (instances !== undefined && (!Number.isSafeInteger(instances) || instances < 1)) {
      throw new TestSetupError(
        `testWith(${application.name}, { instances: ${String(instances)} }): instances is how many apps ` +
          "each test gets over one store, a whole number from 1.",
      );
    }
    this.#application = application;
    this.#options = options;
    this.#modelProviderStandIns = modelProviderStandIns(application);
    this.clock = new TestClock(options.clockStart === undefined ? {} : { start: options.clockStart });
  }

  /** The store all apps of the kit share, opened on first use. */
  store(): Promise<Store> {
    this.#store ??= this.#openStore();
    return this.#store;
  }

  /** The first app, created on first use. */
  app(): Promise<App> {
    this.#first ??= this.openApp();
    return this.#first;
  }

  /**
   * The first `instances` apps of the kit (option `instances`, default 1), opened on first use: the
   * first is {@link TestKit.app}, each other one another instance over the same store and clock.
   */
  apps(): Promise<App[]> {
    this.#instances ??= (async () => {
      const first = await this.app();
      const others: App[] = [];
      for (let i = 1; i < (this.#options.instances ?? 1); i += 1) others.push(await this.openApp());
      return [first, ...others];
    })();
    return this.#instances;
  }

  /**
   * Creates another app of the application over the same store and clock, as another process (or a
   * restart) would: nothing is shared with the others but the store. Scripts and spies apply to it.
   */
  async openApp(): Promise<App> {
    if (this.#closed) throw new TestSetupError("This test's kit is closed; open apps inside the test.");
    const app = await createApp(this.#application, {
      clock: this.clock,
      logger: this.logger,
      store: await this.store(),
      modelsScripted: true,
      env: this.#options.env ?? "test",
      providers: [...this.#modelProviderStandIns, ...(this.#options.providers ?? [])],
    });
    this.#first ??= Promise.resolve(app);
    this.#apps.push(app);
    const { models } = appInternals(app);
    models.setFallback((component, caller) => ({
      invoke: () => Promise.reject(new UnscriptedModelError(component, caller)),
    }));
    for (const script of this.#scripts.values()) models.override(script.component, script);
    for (const [cls, primary] of this.#mockedClasses)
      this.#delegate(app, cls, this.#spies.get(primary) as Spies);
    return app;
  }

  /**
   * The model script of `component` (an agent, or a reply interpreter that calls a model), on every
   * app of the kit. Calling it again for the same component returns the same script.
   */
  mockLlm(component: AnyClass): ModelScript {
    let script = this.#scripts.get(component);
    if (script !== undefined) return script;
    const meta = componentOf<{ decidedBy?: string }>(component);
    const codeInterpreter =
      meta?.kind === ComponentKind.ReplyInterpreter && meta.options.decidedBy === DecidedBy.Code;
    if (meta === undefined || !MODEL_CALLERS.includes(meta.kind) || codeInterpreter) {
      const what =
        meta === undefined
          ? "not an AGBoss component"
          : codeInterpreter
            ? "a reply interpreter decided by code"
            : `a ${meta.kind}`;
      throw new TestSetupError(
        `mockLlm(${component.name}): ${componentLabel(component)} is ${what} and calls no model; only agents and ` +
          `model reply interpreters do. To replace its behaviour, use mockOf(${component.name}).`,
      );
    }
    script = new ModelScript(component);
    this.#scripts.set(component, script);
    for (const app of this.#apps) appInternals(app).models.override(component, script);
    return script;
  }

  /**
   * The first app's instance of `cls` (a provider, or a contract: its one provider), each method
   * replaced by a `vi.spyOn` spy that calls the real method until the test scripts it. The same spies
   * serve that class's instance in every other app of the kit.
   */
  mockOf<T>(cls: AnyClass<T>): MockedInstance<T> {
    const first = this.#apps[0];
    if (first === undefined)
      throw new TestSetupError(`mockOf(${cls.name}) needs an app: await kit.app() first.`);
    const instance = appInternals(first).container.get(cls) as object;
    if (typeof instance !== "object" || instance === null) {
      throw new TestSetupError(
        `mockOf(${cls.name}): the container holds no object for it, so it has no methods to mock.`,
      );
    }
    let spies = this.#spies.get(instance);
    if (spies === undefined) {
      spies = new Map();
      for (const name of methodNames(instance)) {
        spies.set(
          name,
          vi.spyOn(instance as Record<string, (...args: unknown[]) => unknown>, name) as MockInstance,
        );
      }
      this.#spies.set(instance, spies);
    }
    if (!this.#mockedClasses.has(cls)) {
      this.#mockedClasses.set(cls, instance);
      for (const app of this.#apps.slice(1)) this.#delegate(app, cls, spies);
    }
    return instance as MockedInstance<T>;
  }

  /** Closes every app (newest first), then the store. Errors are thrown once all are closed. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const errors: unknown[] = [];
    for (const app of [...this.#apps].reverse()) {
      await app.close().catch((error: unknown) => errors.push(error));
    }
    if (this.#store !== undefined) {
      await this.#store.then((s) => s.close()).catch((error: unknown) => errors.push(error));
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, "Closing the test's apps failed");
  }

  /** Same as {@link TestKit.close}, for `await using`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #openStore(): Promise<Store> {
    const name = componentOf<{ name?: unknown }>(this.#application)?.options.name;
    const context: StoreContext = {
      appName: typeof name === "string" ? name : this.#application.name,
      clock: this.clock,
      logger: this.logger,
    };
    const open = this.#options.store ?? memoryStore();
    const opened = await open(context);
    return typeof opened === "function" ? await opened(context) : opened;
  }

  /** Makes `cls`'s instance in `app` call the first app's spies, with itself as `this`. */
  #delegate(app: App, cls: AnyClass, spies: Spies): void {
    const instance = appInternals(app).container.get(cls) as object;
    for (const [name, spy] of spies) {
      const call = spy as unknown as (...args: unknown[]) => unknown;
      Object.defineProperty(instance, name, {
        configurable: true,
        writable: true,
        value(this: unknown, ...args: unknown[]) {
          return call.apply(this, args);
        },
      });
    }
  }
}
