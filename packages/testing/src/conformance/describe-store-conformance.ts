import type { Store } from "@agboss/core";
import { afterEach, beforeEach, describe, test } from "vitest";
import { budgetCases } from "./budget-cases.js";
import { checkpointerCases } from "./checkpointer-cases.js";
import type { ConformanceContext } from "./conformance-context.js";
import { deadlineCases } from "./deadline-cases.js";
import { executionCases } from "./execution-cases.js";
import { fencingCases } from "./fencing-cases.js";
import { leaseCases } from "./lease-cases.js";
import { pauseCases } from "./pause-cases.js";
import type { StoreConformanceOptions } from "./store-conformance-options.js";
import { threadCases } from "./thread-cases.js";
import { unitOfWorkCases } from "./unit-of-work-cases.js";
import { withdrawalCases } from "./withdrawal-cases.js";

/**
 * The conformance suite every AGBoss store must pass: atomic status changes, tenant isolation,
 * idempotent creation, retention, leases, fencing, JSON round-trips, the budget ledger and units of work. Call it at the top level of a
 * vitest file; it opens a fresh store for every case.
 *
 * @example
 * describeStoreConformance({
 *   name: "sqlite",
 *   createStore: () => SqliteStore.open({ path: join(tmp, `${randomUUID()}.sqlite`) }),
 *   destroyStore: (store) => store.close(),
 *   skip: [{ reason: "no row locks", tests: ["leases: of two racing acquires exactly one wins"] }],
 * });
 */
export function describeStoreConformance(options: StoreConformanceOptions): void {
  const skipped = new Map<string, string>();
  for (const { reason, tests } of options.skip ?? []) for (const name of tests) skipped.set(name, reason);

  describe(`store conformance: ${options.name}`, () => {
    let current: Store | undefined;
    beforeEach(async () => {
      current = await options.createStore();
    });
    afterEach(async () => {
      const store = current;
      current = undefined;
      if (store !== undefined) await options.destroyStore(store);
    });

    const declare = (name: string, body: () => Promise<void>) => {
      const reason = skipped.get(name);
      if (reason !== undefined) test.skip(`${name} [skipped: ${reason}]`, body);
      else test(name, body);
    };
    const context: ConformanceContext = {
      store() {
        if (current === undefined) throw new Error("No store is open: call store() inside a case.");
        return current;
      },
      test: declare,
      peerTest(name, body) {
        const { createPeer } = options;
        if (createPeer === undefined) {
          test.skip(`${name} [skipped: the store has no createPeer]`, () => {});
          return;
        }
        declare(name, async () => {
          const peer = await createPeer(context.store());
          try {
            await body(peer);
          } finally {
            await peer.close();
          }
        });
      },
    };

    threadCases(context);
    executionCases(context);
    leaseCases(context);
    pauseCases(context);
    deadlineCases(context);
    withdrawalCases(context);
    fencingCases(context);
    checkpointerCases(context);
    budgetCases(context);
    unitOfWorkCases(context);
  });
}
