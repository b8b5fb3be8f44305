import type { Store } from "@agboss/core";
import type { BudgetCharge, BudgetLedgerKey, BudgetSpend } from "@agboss/core/store";
import { expect } from "vitest";
import type { ConformanceContext } from "./conformance-context.js";
import { uid } from "./fixtures.js";

const ZERO: BudgetSpend = { modelCalls: 0, inputTokens: 0, outputTokens: 0 };
const ONE_CALL: BudgetSpend = { modelCalls: 1, inputTokens: 120, outputTokens: 30 };

const key = (overrides: Partial<BudgetLedgerKey> = {}): BudgetLedgerKey => ({
  tenantId: "tenant-a",
  budget: uid("application/daily"),
  windowStart: 0,
  ...overrides,
});
const charge = (k: BudgetLedgerKey, expiresAt?: number): BudgetCharge => ({ key: k, expiresAt });

/** The budget ledger: additive charges, atomic across instances, windows and expiry. @internal */
export function budgetCases({ store, test, peerTest }: ConformanceContext): void {
  const budgets = () => store().budgets;

  test("budgets: read gives the spend under each key in the order given, zeros for a key never charged", async () => {
    const a = key();
    const b = key();
    const never = key();
    await budgets().charge([charge(a)], ONE_CALL);
    await budgets().charge([charge(b)], { modelCalls: 2, inputTokens: 5, outputTokens: 7 });
    expect(await budgets().read([never, b, a, b])).toEqual([
      ZERO,
      { modelCalls: 2, inputTokens: 5, outputTokens: 7 },
      ONE_CALL,
      { modelCalls: 2, inputTokens: 5, outputTokens: 7 },
    ]);
    expect(await budgets().read([])).toEqual([]);
  });

  test("budgets: charges add up, every counter of one charge at once, creating the missing ones", async () => {
    const app = key({ tenantId: "*" });
    const tenant = key();
    const execution = key({ budget: uid("execution/root") });
    await budgets().charge([charge(app), charge(tenant)], ONE_CALL);
    await budgets().charge([charge(app), charge(tenant), charge(execution)], {
      modelCalls: 1,
      inputTokens: 1_000_000_000,
      outputTokens: 2 ** 40,
    });
    const sum = { modelCalls: 2, inputTokens: 1_000_000_120, outputTokens: 2 ** 40 + 30 };
    expect(await budgets().read([app, tenant, execution])).toEqual([
      sum,
      sum,
      { modelCalls: 1, inputTokens: 1_000_000_000, outputTokens: 2 ** 40 },
    ]);
    await budgets().charge([], ONE_CALL);
    expect(await budgets().read([app])).toEqual([sum]);
  });

  test("budgets: a counter is its (tenant, budget, window): other windows, tenants and budgets are apart", async () => {
    const budget = uid("workflow/refund/hourly");
    const first = key({ budget, windowStart: 3_600_000 });
    const next = key({ budget, windowStart: 7_200_000 });
    const otherTenant = key({ budget, windowStart: 3_600_000, tenantId: "tenant-b" });
    const everyone = key({ budget, windowStart: 3_600_000, tenantId: "*" });
    await budgets().charge([charge(first, 7_200_000)], ONE_CALL);
    await budgets().charge([charge(first, 7_200_000)], ONE_CALL);
    await budgets().charge([charge(next, 10_800_000)], ONE_CALL);
    expect(await budgets().read([first, next, otherTenant, everyone, key({ budget: uid("other") })])).toEqual(
      [{ modelCalls: 2, inputTokens: 240, outputTokens: 60 }, ONE_CALL, ZERO, ZERO, ZERO],
    );
  });

  test("budgets: deleteExpired removes counters whose expiresAt is before now, keeps the rest and those without one", async () => {
    const expired = key({ windowStart: 1_000 });
    const atNow = key({ windowStart: 2_000 });
    const later = key({ windowStart: 3_000 });
    const kept = key();
    await budgets().charge([charge(expired, 1_999), charge(atNow, 2_000), charge(later, 5_000)], ONE_CALL);
    await budgets().charge([charge(kept)], ONE_CALL);
    expect(await budgets().deleteExpired(2_000)).toBe(1);
    expect(await budgets().read([expired, atNow, later, kept])).toEqual([ZERO, ONE_CALL, ONE_CALL, ONE_CALL]);
    expect(await budgets().deleteExpired(2_000)).toBe(0);
    expect(await budgets().deleteExpired(Number.MAX_SAFE_INTEGER)).toBe(2);
    expect(await budgets().read([atNow, later, kept])).toEqual([ZERO, ZERO, ONE_CALL]);
  });

  test("budgets: the first charge's expiresAt stays", async () => {
    const early = key({ windowStart: 1_000 });
    const unset = key({ windowStart: 2_000 });
    await budgets().charge([charge(early, 5_000), charge(unset)], ONE_CALL);
    await budgets().charge([charge(early, 50_000), charge(unset, 5_000)], ONE_CALL);
    expect(await budgets().deleteExpired(10_000)).toBe(1);
    expect(await budgets().read([early, unset])).toEqual([
      ZERO,
      { modelCalls: 2, inputTokens: 240, outputTokens: 60 },
    ]);
  });

  const concurrent = async (one: Store, other: Store) => {
    const shared = key({ tenantId: "*" });
    const tenant = key();
    const n = 40;
    await Promise.all(
      Array.from({ length: n }, (_, i) =>
        (i % 2 === 0 ? one : other).budgets.charge([charge(shared, 1e12), charge(tenant, 1e12)], {
          modelCalls: 1,
          inputTokens: i,
          outputTokens: 2 * i,
        }),
      ),
    );
    const inputs = (n * (n - 1)) / 2;
    const total = { modelCalls: n, inputTokens: inputs, outputTokens: 2 * inputs };
    expect(await one.budgets.read([shared, tenant])).toEqual([total, total]);
    expect(await other.budgets.read([shared, tenant])).toEqual([total, total]);
  };
  test("budgets: concurrent charges on one store sum exactly", () => concurrent(store(), store()));
  peerTest("budgets: concurrent charges from two store instances sum exactly", (peer) =>
    concurrent(store(), peer),
  );
}
