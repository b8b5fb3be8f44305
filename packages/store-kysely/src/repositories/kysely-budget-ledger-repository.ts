import type { BudgetCharge, BudgetLedgerKey, BudgetLedgerRepository, BudgetSpend } from "@agboss/core/store";
import type { Kysely, Selectable } from "kysely";
import { PreparedQuery } from "../prepared-query.js";
import type { AgbossDatabase, BudgetLedgerTable } from "../schema/agboss-database.js";
import { toNumber } from "../schema/columns.js";
import { inWriteTransaction, type StoreDatabase } from "../write-transactions.js";

type LedgerRow = Pick<
  Selectable<BudgetLedgerTable>,
  "tenant_id" | "budget" | "window_start" | "model_calls" | "input_tokens" | "output_tokens"
>;

interface ChargeArgs {
  tenant_id: string;
  budget: string;
  window_start: number;
  model_calls: number;
  input_tokens: number;
  output_tokens: number;
  expires_at: number | null;
}

/** Reads of up to this many keys are compiled once per key count; longer ones are built each time. */
const MAX_PREPARED_READ = 16;

/**
 * {@link BudgetLedgerRepository} on kysely. A charge is one `insert … on conflict do update` per
 * counter, adding to the stored values in the database (never a read-modify-write here), all in one
 * write transaction; the first charge's `expires_at` stays.
 */
export class KyselyBudgetLedgerRepository implements BudgetLedgerRepository {
  readonly #store: StoreDatabase;
  readonly #charge: PreparedQuery<ChargeArgs>;
  readonly #deleteExpired: PreparedQuery<{ now: number }>;
  /** Reads by key count, compiled the first time each count runs. */
  readonly #reads = new Map<number, PreparedQuery<Record<string, unknown>, LedgerRow>>();

  constructor(store: StoreDatabase) {
    this.#store = store;
    const db = store.db;
    this.#charge = new PreparedQuery((slot) =>
      db
        .insertInto("agboss_budget_ledger")
        .values({
          tenant_id: slot("tenant_id"),
          budget: slot("budget"),
          window_start: slot("window_start"),
          model_calls: slot("model_calls"),
          input_tokens: slot("input_tokens"),
          output_tokens: slot("output_tokens"),
          expires_at: slot("expires_at"),
        })
        .onConflict((oc) =>
          oc.columns(["tenant_id", "budget", "window_start"]).doUpdateSet((eb) => ({
            model_calls: eb("agboss_budget_ledger.model_calls", "+", eb.ref("excluded.model_calls")),
            input_tokens: eb("agboss_budget_ledger.input_tokens", "+", eb.ref("excluded.input_tokens")),
            output_tokens: eb("agboss_budget_ledger.output_tokens", "+", eb.ref("excluded.output_tokens")),
          })),
        ),
    );
    this.#deleteExpired = new PreparedQuery((slot) =>
      db.deleteFrom("agboss_budget_ledger").where("expires_at", "<", slot("now")),
    );
  }

  async read(keys: readonly BudgetLedgerKey[]): Promise<BudgetSpend[]> {
    if (keys.length === 0) return [];
    const args: Record<string, unknown> = {};
    keys.forEach((key, i) => {
      args[`t${i}`] = key.tenantId;
      args[`b${i}`] = key.budget;
      args[`w${i}`] = key.windowStart;
    });
    const { rows } = await this.#readOf(keys.length).execute(this.#store.db, args);
    const found = new Map(rows.map((row) => [rowKey(row.tenant_id, row.budget, row.window_start), row]));
    return keys.map((key) => {
      const row = found.get(rowKey(key.tenantId, key.budget, key.windowStart));
      return row === undefined
        ? { modelCalls: 0, inputTokens: 0, outputTokens: 0 }
        : {
            modelCalls: toNumber(row.model_calls),
            inputTokens: toNumber(row.input_tokens),
            outputTokens: toNumber(row.output_tokens),
          };
    });
  }

  async charge(charges: readonly BudgetCharge[], spend: BudgetSpend): Promise<void> {
    if (charges.length === 0) return;
    const rows: ChargeArgs[] = charges.map(({ key, expiresAt }) => ({
      tenant_id: key.tenantId,
      budget: key.budget,
      window_start: key.windowStart,
      model_calls: spend.modelCalls,
      input_tokens: spend.inputTokens,
      output_tokens: spend.outputTokens,
      expires_at: expiresAt ?? null,
    }));
    // One statement per counter, not one multi-row insert: Postgres refuses an upsert that meets the
    // same key twice, and a caller may charge one counter under two budgets' names. In key order, so
    // two charges that share counters lock their rows in the same order and cannot deadlock.
    rows.sort(compareCounters);
    await inWriteTransaction(this.#store, async (trx) => {
      for (const row of rows) await this.#charge.execute(trx, row);
    });
  }

  deleteExpired(now: number): Promise<number> {
    return inWriteTransaction(this.#store, (trx) => this.#deleteExpired.affected(trx, { now }));
  }

  #readOf(count: number): PreparedQuery<Record<string, unknown>, LedgerRow> {
    const cached = this.#reads.get(count);
    if (cached !== undefined) return cached;
    const read = new PreparedQuery<Record<string, unknown>, LedgerRow>((slot) =>
      selectKeys(this.#store.db, count, slot as (name: string) => unknown),
    );
    if (count <= MAX_PREPARED_READ) this.#reads.set(count, read);
    return read;
  }
}

function selectKeys(db: Kysely<AgbossDatabase>, count: number, slot: (name: string) => unknown) {
  return db
    .selectFrom("agboss_budget_ledger")
    .select(["tenant_id", "budget", "window_start", "model_calls", "input_tokens", "output_tokens"])
    .where((eb) =>
      eb.or(
        Array.from({ length: count }, (_, i) =>
          eb.and([
            eb("tenant_id", "=", slot(`t${i}`) as string),
            eb("budget", "=", slot(`b${i}`) as string),
            eb("window_start", "=", slot(`w${i}`) as number),
          ]),
        ),
      ),
    );
}

function compareCounters(a: ChargeArgs, b: ChargeArgs): number {
  if (a.tenant_id !== b.tenant_id) return a.tenant_id < b.tenant_id ? -1 : 1;
  if (a.budget !== b.budget) return a.budget < b.budget ? -1 : 1;
  return a.window_start - b.window_start;
}

function rowKey(tenantId: string, budget: string, windowStart: number | string | bigint): string {
  return JSON.stringify([tenantId, budget, toNumber(windowStart)]);
}
