import type { Duration } from "../time/duration.js";

const BUDGET = Symbol.for("agboss.budget");

/** Limits on model spend. A limit left out is no limit. */
export interface BudgetLimits {
  /** At most this many model calls (an agent's turns, an interpreter's reads). */
  readonly modelCalls?: number;
  /** At most this many tokens, input and output together. */
  readonly tokens?: number;
}

/** Who shares one ledger of an application or workflow budget. */
export const BudgetPer = {
  /** Each tenant has its own spend (the default). */
  Tenant: "tenant",
  /** Every tenant draws from one spend. */
  Application: "application",
} as const;

/** One of {@link BudgetPer}. */
export type BudgetPer = (typeof BudgetPer)[keyof typeof BudgetPer];

/** What {@link budget} takes. */
export interface BudgetOptions extends BudgetLimits {
  /** Unique among the budgets of its application or workflow; errors and ledgers name it. */
  readonly name: string;
  /** A fixed window on the application's Clock (e.g. `days(1)`); the spend starts at zero in each. Default: no window. */
  readonly window?: Duration;
  /** Default {@link BudgetPer.Tenant}. */
  readonly per?: BudgetPer;
}

/** A checked, frozen budget for `@Application({ budgets })` or `@Workflow({ budgets })`. Build it with {@link budget}. */
export interface Budget extends Required<Pick<BudgetOptions, "name" | "per">>, BudgetLimits {
  readonly window: Duration | undefined;
  readonly [BUDGET]: true;
}

function checkLimit(where: string, field: string, value: unknown): void {
  if (value !== undefined && (typeof value !== "number" || !Number.isInteger(value) || value < 0)) {
    throw new TypeError(`${where}: ${field} must be a whole number of 0 or more (got ${String(value)}).`);
  }
}

/** Throws a TypeError saying what to fix when `limits` are not whole numbers of 0 or more. @internal */
export function checkBudgetLimits(where: string, limits: BudgetLimits): Readonly<BudgetLimits> {
  checkLimit(where, "modelCalls", limits.modelCalls);
  checkLimit(where, "tokens", limits.tokens);
  return Object.freeze({
    ...(limits.modelCalls === undefined ? {} : { modelCalls: limits.modelCalls }),
    ...(limits.tokens === undefined ? {} : { tokens: limits.tokens }),
  });
}

/**
 * A limit on model spend for an application or a workflow, over a window or for good. Every model
 * call (agents' and reply interpreters') is checked against it before it is made and counted after.
 *
 * @example
 * @Application({ name: "refund-application", workflows: [RefundWorkflow],
 *   budgets: [budget({ name: "daily-tokens", tokens: 2_000_000, window: days(1) })] })
 */
export function budget(options: BudgetOptions): Budget {
  const where = `budget(${JSON.stringify(options.name)})`;
  if (typeof options.name !== "string" || options.name.trim() === "") {
    throw new TypeError("budget({ name }): a budget needs a non-empty name.");
  }
  checkBudgetLimits(where, options);
  if (options.window !== undefined && !(options.window.milliseconds > 0)) {
    throw new TypeError(`${where}: window must be a positive duration, e.g. days(1).`);
  }
  const per = options.per ?? BudgetPer.Tenant;
  if (per !== BudgetPer.Tenant && per !== BudgetPer.Application) {
    throw new TypeError(`${where}: per must be BudgetPer.Tenant or BudgetPer.Application.`);
  }
  return Object.freeze({
    ...checkBudgetLimits(where, options),
    name: options.name,
    window: options.window,
    per,
    [BUDGET]: true as const,
  });
}
