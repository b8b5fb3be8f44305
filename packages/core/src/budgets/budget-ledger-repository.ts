/** One counter of a budget ledger: a budget, whose spend (a tenant, or `*` for all), and its window. */
export interface BudgetLedgerKey {
  /** The tenant, or `*` for a budget every tenant shares. */
  readonly tenantId: string;
  /** The budget, e.g. `application/daily-tokens`, `workflow/refund-workflow/hourly`, `execution/<rootExecutionId>`. */
  readonly budget: string;
  /** Start of the window in epoch milliseconds on the Clock; 0 for a budget without a window. */
  readonly windowStart: number;
}

/** What a ledger counter holds. */
export interface BudgetSpend {
  readonly modelCalls: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
}

/** One counter to charge, and when the counter may be deleted. */
export interface BudgetCharge {
  readonly key: BudgetLedgerKey;
  /**
   * Epoch milliseconds after which nobody reads the counter (its window ended); undefined: kept.
   * It follows from the key, so the first charge's value is kept.
   */
  readonly expiresAt: number | undefined;
}

/**
 * Model spend counters shared by every instance on the store. Charges add: two instances charging
 * the same key at once both land (an atomic increment, never a read-modify-write in the caller).
 */
export interface BudgetLedgerRepository {
  /** The spend under each key, in the order given; zeros for a key never charged. */
  read(keys: readonly BudgetLedgerKey[]): Promise<BudgetSpend[]>;
  /** Adds `spend` to every counter in one transaction, creating the missing ones. */
  charge(charges: readonly BudgetCharge[], spend: BudgetSpend): Promise<void>;
  /** Deletes the counters whose `expiresAt` is before `now`; returns how many. */
  deleteExpired(now: number): Promise<number>;
}
