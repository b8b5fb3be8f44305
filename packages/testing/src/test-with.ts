import type { AnyClass, App } from "@agboss/core";
import { type TestAPI, test } from "vitest";
import type { AgbossFixtures } from "./agboss-fixtures.js";
import { TestKit } from "./test-kit.js";
import type { TestKitOptions } from "./test-kit-options.js";

/**
 * A vitest `test` whose tests each run an AGBoss application on a fresh store, a {@link TestKit}
 * clock and scripted models: fixtures `{ app, apps, openApp, mockLlm, mockOf, clock, logger, store, kit }`.
 * With `{ instances: N }` each test gets N apps (`apps`) over its one store and clock, as N processes.
 * Every app a test opened is closed after it, then its store.
 *
 * @example
 * const test = testWith(RefundApplication);
 *
 * test("refunds the order", async ({ app, mockLlm }) => {
 *   mockLlm(RefundAgent).thenReturn(callTool(RefundCardTool, { orderId: "o1" }), replyWith("Refunded o1"));
 *   const result = await app.execute(RefundWorkflowStart, { text: "refund o1" }, { ownerId: "u1" });
 *   expect(result.output).toEqual({ text: "Refunded o1" });
 * });
 *
 * const twoInstances = testWith(RefundApplication, { instances: 2 });
 * twoInstances("answers two pauses from two instances at once", async ({ apps: [one, two] }) => { … });
 */
export function testWith(application: AnyClass, options: TestKitOptions = {}): TestAPI<AgbossFixtures> {
  return test.extend<AgbossFixtures>({
    // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern
    kit: async ({}, use) => {
      const kit = new TestKit(application, options);
      try {
        await use(kit);
      } finally {
        await kit.close();
      }
    },
    app: async ({ kit }, use) => use((await kit.apps())[0] as App),
    apps: async ({ kit }, use) => use(await kit.apps()),
    openApp: async ({ kit }, use) => use(() => kit.openApp()),
    mockLlm: async ({ kit }, use) => use((component) => kit.mockLlm(component)),
    mockOf: async ({ kit, app: _app }, use) => use((cls) => kit.mockOf(cls)),
    clock: async ({ kit }, use) => use(kit.clock),
    logger: async ({ kit }, use) => use(kit.logger),
    store: async ({ kit }, use) => use(await kit.store()),
  });
}
