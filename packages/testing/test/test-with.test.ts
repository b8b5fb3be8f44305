import {
  type App,
  AppClosedError,
  Application,
  createApp,
  MemoryStore,
  ModelProvider,
  type ModelProviderHandler,
  memoryStore,
  type OnInit,
  replyWith,
  type Store,
} from "@agboss/core";
import { describe, expect, vi } from "vitest";
import { TEST_CLOCK_START, TestKit, TestSetupError, testWith } from "../src/index.js";
import {
  InboxNotifier,
  OrderBook,
  SlowToolProbe,
  SupportAgent,
  SupportApplication,
  SupportWorkflow,
  SupportWorkflowStart,
} from "./fixtures/support-app.js";

const test = testWith(SupportApplication);

const ask = (app: App, threadId: string, ownerId = "customer-1") =>
  app.execute(SupportWorkflowStart, { text: "Where is my order?" }, { threadId, ownerId });

let earlier: { app: App; other: App | undefined; store: Store } | undefined;

describe("testWith", () => {
  test("[TK-01] a test gets { app, mockLlm, mockOf, clock } on its own store", async ({
    app,
    mockLlm,
    mockOf,
    clock,
    store,
    logger,
  }) => {
    expect(app.name).toBe("support-application");
    expect(app.store).toBe(store);
    expect(clock.now()).toBe(TEST_CLOCK_START);
    expect(new Date(clock.now()).toISOString()).toBe("2026-01-01T00:00:00.000Z");
    expect(logger.entries).toEqual([]);

    mockLlm(SupportAgent).thenReturn(replyWith("It shipped."));
    mockOf(OrderBook).status.mockReturnValue("lost");
    const result = await ask(app, "thread-kept-in-one-test");
    expect(result.output).toEqual({ text: "It shipped." });
    expect(await store.threads.findByTenantIdAndThreadId("default", "thread-kept-in-one-test")).toMatchObject(
      {
        ownerId: "customer-1",
      },
    );
    earlier = { app, other: undefined, store };
  });

  test("[TK-01] the next test starts on a fresh store with fresh scripts and spies, and the last test's app is closed", async ({
    app,
    mockLlm,
    mockOf,
    store,
  }) => {
    expect(earlier).toBeDefined();
    const previous = earlier as NonNullable<typeof earlier>;
    expect(store).not.toBe(previous.store);
    expect(app).not.toBe(previous.app);
    expect(
      await store.threads.findByTenantIdAndThreadId("default", "thread-kept-in-one-test"),
    ).toBeUndefined();

    // Another owner can take the same thread id: on a shared store this would be a ThreadOwnerError.
    const script = mockLlm(SupportAgent).thenReturn(replyWith("Fresh start."));
    await expect(ask(app, "thread-kept-in-one-test", "customer-2")).resolves.toMatchObject({
      output: { text: "Fresh start." },
    });
    expect(script.calls).toHaveLength(1);
    expect(mockOf(OrderBook).status("o1")).toBe("shipped");
    expect(mockOf(OrderBook).status).toHaveBeenCalledTimes(1);

    await expect(ask(previous.app, "another-thread")).rejects.toBeInstanceOf(AppClosedError);
  });

  test("[TK-01] openApp() opens a second app over the same store and clock, and the scripts serve it too", async ({
    app,
    openApp,
    mockLlm,
    clock,
    store,
  }) => {
    const script = mockLlm(SupportAgent).thenReturn(replyWith("First answer."), replyWith("Second answer."));
    await expect(ask(app, "thread-across-apps")).resolves.toMatchObject({
      output: { text: "First answer." },
    });

    const other = await openApp();
    expect(other).not.toBe(app);
    expect(other.store).toBe(store);
    await clock.advance(1_000);
    const followUp = await ask(other, "thread-across-apps");
    expect(followUp.output).toEqual({ text: "Second answer." });
    expect(script.calls).toHaveLength(2);
    const thread = await store.threads.findByTenantIdAndThreadId("default", "thread-across-apps");
    expect(thread).toMatchObject({
      latestExecutionId: followUp.executionId,
      updatedAt: TEST_CLOCK_START + 1_000,
    });
    earlier = { app, other, store };
  });

  test("[TK-01] every app a test opened is closed after it", async () => {
    const previous = earlier as NonNullable<typeof earlier>;
    expect(previous.other).toBeDefined();
    await expect(ask(previous.app, "late")).rejects.toBeInstanceOf(AppClosedError);
    await expect(ask(previous.other as App, "late")).rejects.toBeInstanceOf(AppClosedError);
  });
});

describe("testWith({ store })", () => {
  const opened: { store: MemoryStore; close: ReturnType<typeof vi.spyOn> }[] = [];
  const sqliteLike = testWith(SupportApplication, {
    store: () => {
      const store = new MemoryStore();
      opened.push({ store, close: vi.spyOn(store, "close") });
      return store;
    },
  });

  sqliteLike(
    "[TK-01] a store factory is called once per test and its store is closed after the test",
    async ({ app, openApp, store }) => {
      const other = await openApp();
      expect(opened).toHaveLength(1);
      expect(app.store).toBe(opened[0]?.store);
      expect(other.store).toBe(store);
      expect(opened[0]?.close).not.toHaveBeenCalled();
    },
  );

  sqliteLike(
    "[TK-01] the next test gets a new store from the factory; the last one was closed once",
    async ({ store }) => {
      expect(opened).toHaveLength(2);
      expect(store).toBe(opened[1]?.store);
      expect(opened[0]?.close).toHaveBeenCalledTimes(1);
    },
  );
});

describe("testWith({ instances })", () => {
  const twoInstances = testWith(SupportApplication, { instances: 2 });

  twoInstances(
    "[TK-01] { instances: 2 } gives each test two apps over one store and clock; app is the first",
    async ({ app, apps, mockLlm, store, clock }) => {
      expect(apps).toHaveLength(2);
      const [one, two] = apps as [App, App];
      expect(one).toBe(app);
      expect(two).not.toBe(one);
      expect(two.store).toBe(store);
      const script = mockLlm(SupportAgent).thenReturn(replyWith("From one."), replyWith("From two."));
      await expect(ask(one, "thread-two-instances")).resolves.toMatchObject({
        output: { text: "From one." },
      });
      await clock.advance(1_000);
      const followUp = await ask(two, "thread-two-instances");
      expect(followUp.output).toEqual({ text: "From two." });
      expect(script.calls).toHaveLength(2);
      expect(await store.threads.findByTenantIdAndThreadId("default", "thread-two-instances")).toMatchObject({
        latestExecutionId: followUp.executionId,
        updatedAt: TEST_CLOCK_START + 1_000,
      });
      earlier = { app: one, other: two, store };
    },
  );

  twoInstances("[TK-01] both instances are closed after the test", async () => {
    const previous = earlier as NonNullable<typeof earlier>;
    await expect(ask(previous.app, "late")).rejects.toBeInstanceOf(AppClosedError);
    await expect(ask(previous.other as App, "late")).rejects.toBeInstanceOf(AppClosedError);
  });

  test("[TK-01] without the option, apps is [app]", async ({ app, apps }) => {
    expect(apps).toEqual([app]);
  });

  test("[TK-01] instances must be a whole number from 1", () => {
    for (const instances of [0, -1, 1.5, Number.NaN]) {
      expect(() => new TestKit(SupportApplication, { instances })).toThrow(TestSetupError);
    }
  });
});

/** A model provider that cannot start without a key, as a real one would; it counts what it is asked. */
const keyless = { created: 0, chatModels: 0 };

@ModelProvider({ name: "keyless-model-provider", serves: ["test/*"] })
class KeylessModelProvider implements ModelProviderHandler, OnInit {
  constructor() {
    keyless.created += 1;
  }
  onInit(): void {
    throw new Error("KEYLESS_API_KEY is not set");
  }
  chatModel(): never {
    keyless.chatModels += 1;
    throw new Error("no model without a key");
  }
}

@Application({
  name: "keyless-support-application",
  workflows: [SupportWorkflow],
  providers: [OrderBook, InboxNotifier, SlowToolProbe, KeylessModelProvider],
})
class KeylessSupportApplication {}

describe("testWith and the application's model providers", () => {
  const keylessTest = testWith(KeylessSupportApplication, { instances: 2 });

  keylessTest(
    "[TK-04] the application's own model providers are neither created nor asked: models answer from mockLlm",
    async ({ apps, mockLlm }) => {
      mockLlm(SupportAgent).thenReturn(replyWith("It shipped."), replyWith("Still shipped."));
      for (const [i, app] of apps.entries()) {
        const result = await ask(app, `keyless-${i}`);
        expect(result.status).toBe("completed");
      }
      expect(keyless).toEqual({ created: 0, chatModels: 0 });
    },
  );

  test("[TK-04] outside the kit, the same application does not start without its key", async () => {
    await expect(createApp(KeylessSupportApplication, { store: memoryStore() })).rejects.toThrow(
      "KEYLESS_API_KEY is not set",
    );
    expect(keyless.created).toBe(1);
  });
});
