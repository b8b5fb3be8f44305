import type {
  BudgetCharge,
  BudgetLedgerKey,
  BudgetLedgerRepository,
  BudgetSpend,
} from "./budget-ledger-repository.js";

const ZERO: BudgetSpend = Object.freeze({ modelCalls: 0, inputTokens: 0, outputTokens: 0 });

const keyOf = (key: BudgetLedgerKey) => JSON.stringify([key.tenantId, key.budget, key.windowStart]);

/** {@link BudgetLedgerRepository} in memory: the reference implementation. */
export class MemoryBudgetLedgerRepository implements BudgetLedgerRepository {
  readonly #rows = new Map<string, { spend: BudgetSpend; expiresAt: number | undefined }>();

  async read(keys: readonly BudgetLedgerKey[]): Promise<BudgetSpend[]> {
    return keys.map((key) => ({ ...(this.#rows.get(keyOf(key))?.spend ?? ZERO) }));
  }

  async charge(charges: readonly BudgetCharge[], spend: BudgetSpend): Promise<void> {
    for (const { key, expiresAt } of charges) {
      const row = this.#rows.get(keyOf(key));
      const was = row?.spend ?? ZERO;
      this.#rows.set(keyOf(key), {
        spend: Object.freeze({
          modelCalls: was.modelCalls + spend.modelCalls,
          inputTokens: was.inputTokens + spend.inputTokens,
          outputTokens: was.outputTokens + spend.outputTokens,
        }),
        expiresAt: row === undefined ? expiresAt : row.expiresAt,
      });
    }
  }

  async deleteExpired(now: number): Promise<number> {
    let removed = 0;
    for (const [key, row] of this.#rows) {
      if (row.expiresAt !== undefined && row.expiresAt < now) {
        this.#rows.delete(key);
        removed += 1;
      }
    }
    return removed;
  }
}
