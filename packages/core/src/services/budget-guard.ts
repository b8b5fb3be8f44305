import type { Budget, BudgetLimits } from "../budgets/budget.js";
import { BudgetExceededError, type BudgetLevel } from "../budgets/budget-exceeded-error.js";
import type {
  BudgetCharge,
  BudgetLedgerRepository,
  BudgetSpend,
} from "../budgets/budget-ledger-repository.js";
import { MemoryBudgetLedgerRepository } from "../budgets/memory-budget-ledger-repository.js";
import type { WorkflowOptions } from "../components/workflow.js";
import { componentOf } from "../container/component-registry.js";
import { LogLevel } from "../logging/logger.js";
import type { ModelUsage } from "../models/chat-model.js";
import { RecentMap } from "./recent-map.js";
import type { RuntimeServices } from "./runtime-services.js";

/** Who a model call spends for. @internal */
export interface BudgetScope {
  readonly tenantId: string;
  readonly rootExecutionId: string;
  readonly workflow: string;
}

/** One budget of a call's tree, with the counter it reads and charges. @internal */
export interface AppliedBudget {
  readonly level: BudgetLevel;
  readonly name: string;
  readonly limits: BudgetLimits;
  readonly charge: BudgetCharge;
  readonly tenantId: string | undefined;
  readonly resetsAt: number | undefined;
}

const fallbacks = new WeakMap<RuntimeServices, BudgetLedgerRepository>();
const executionBudgets = new WeakMap<RuntimeServices, RecentMap<string, BudgetLimits | null>>();
/**
 * How many executions' own budgets an app remembers; past it the oldest is dropped (and read from its
 * record again if a model call of it needs it), so what the process keeps never grows with its executions.
 * @internal
 */
export const MAX_REMEMBERED_BUDGETS = 1_000;

/** The store's ledger; a store without one gets a per-process ledger, and one warning. @internal */
export function ledgerOf(services: RuntimeServices): BudgetLedgerRepository {
  if (services.store.budgets !== undefined) return services.store.budgets;
  let ledger = fallbacks.get(services);
  if (ledger === undefined) {
    ledger = new MemoryBudgetLedgerRepository();
    fallbacks.set(services, ledger);
    services.logger.log({
      level: LogLevel.Warn,
      event: "budget.ledger-in-process",
      message: `store "${services.store.name}" keeps no budget ledger: budgets count in this process only.`,
      fields: { store: services.store.name },
      at: services.clock.now(),
    });
  }
  return ledger;
}

function remembered(services: RuntimeServices): RecentMap<string, BudgetLimits | null> {
  let map = executionBudgets.get(services);
  if (map === undefined) {
    map = new RecentMap(MAX_REMEMBERED_BUDGETS);
    executionBudgets.set(services, map);
  }
  return map;
}

/**
 * Remembers the budget `app.execute` gave a tree, so this process need not read it back from the
 * execution record. @internal
 */
export function rememberExecutionBudget(
  services: RuntimeServices,
  tenantId: string,
  rootExecutionId: string,
  limits: BudgetLimits | undefined,
): void {
  remembered(services).set(`${tenantId}/${rootExecutionId}`, limits ?? null);
}

/** The budget remembered for a tree: `null` for none, `undefined` when not remembered. @internal */
export function rememberedExecutionBudget(
  services: RuntimeServices,
  tenantId: string,
  rootExecutionId: string,
): BudgetLimits | null | undefined {
  return remembered(services).get(`${tenantId}/${rootExecutionId}`);
}

async function executeBudgetOf(services: RuntimeServices, scope: BudgetScope): Promise<BudgetLimits | null> {
  const key = `${scope.tenantId}/${scope.rootExecutionId}`;
  const map = remembered(services);
  const known = map.get(key);
  if (known !== undefined) return known;
  const stored = await services.store.executions.findByTenantIdAndExecutionId(
    scope.tenantId,
    scope.rootExecutionId,
  );
  const limits = (stored?.record as { budget?: BudgetLimits } | undefined)?.budget ?? null;
  if (stored !== undefined) map.set(key, limits);
  return limits;
}

function windowed(at: {
  level: BudgetLevel;
  prefix: string;
  budget: Budget;
  scope: BudgetScope;
  now: number;
}) {
  const { level, prefix, budget: b, scope, now } = at;
  const ms = b.window?.milliseconds;
  const windowStart = ms === undefined ? 0 : Math.floor(now / ms) * ms;
  const tenantId = b.per === "tenant" ? scope.tenantId : undefined;
  return {
    level,
    name: b.name,
    limits: b,
    tenantId,
    resetsAt: ms === undefined ? undefined : windowStart + ms,
    charge: {
      key: { tenantId: tenantId ?? "*", budget: `${prefix}/${b.name}`, windowStart },
      expiresAt: ms === undefined ? undefined : windowStart + ms,
    },
  } satisfies AppliedBudget;
}

/** Every budget a call in `scope` counts against: the application's, the workflow's, the execution's. @internal */
export async function budgetsOf(services: RuntimeServices, scope: BudgetScope): Promise<AppliedBudget[]> {
  const now = services.clock.now();
  const applied: AppliedBudget[] = (services.assembled.options.budgets ?? []).map((b) =>
    windowed({ level: "application", prefix: "application", budget: b, scope, now }),
  );
  const flow = [...services.assembled.flows.values()].find((f) => f.workflow.name === scope.workflow);
  const workflow = flow === undefined ? undefined : componentOf<WorkflowOptions>(flow.workflow.cls)?.options;
  for (const b of workflow?.budgets ?? [])
    applied.push(
      windowed({ level: "workflow", prefix: `workflow/${scope.workflow}`, budget: b, scope, now }),
    );
  const limits = (await executeBudgetOf(services, scope)) ?? workflow?.executionBudget;
  if (limits !== undefined && (limits.modelCalls !== undefined || limits.tokens !== undefined)) {
    applied.push({
      level: "execution",
      name: "execution",
      limits,
      tenantId: scope.tenantId,
      resetsAt: undefined,
      charge: {
        key: { tenantId: scope.tenantId, budget: `execution/${scope.rootExecutionId}`, windowStart: 0 },
        expiresAt: undefined,
      },
    });
  }
  return applied;
}

/** Throws {@link BudgetExceededError} for the first budget already used up. @internal */
export async function checkBudgets(
  services: RuntimeServices,
  applied: readonly AppliedBudget[],
  caller: string,
): Promise<void> {
  if (applied.length === 0) return;
  const spent = await ledgerOf(services).read(applied.map((a) => a.charge.key));
  applied.forEach((budget, i) => {
    const spend = spent[i] as BudgetSpend;
    const tokens = spend.inputTokens + spend.outputTokens;
    const over =
      budget.limits.modelCalls !== undefined && spend.modelCalls >= budget.limits.modelCalls
        ? { limit: "modelCalls" as const, max: budget.limits.modelCalls, spent: spend.modelCalls }
        : budget.limits.tokens !== undefined && tokens >= budget.limits.tokens
          ? { limit: "tokens" as const, max: budget.limits.tokens, spent: tokens }
          : undefined;
    if (over !== undefined) {
      throw new BudgetExceededError({
        budget: budget.name,
        level: budget.level,
        ...over,
        tenantId: budget.tenantId,
        resetsAt: budget.resetsAt === undefined ? undefined : new Date(budget.resetsAt).toISOString(),
        caller,
      });
    }
  });
}

/**
 * Counts one model call (and its tokens, when the model reported them) in every budget's counter.
 * A ledger that fails is logged, not thrown: the call was made, and its answer is kept.
 * @internal
 */
export async function chargeBudgets(
  services: RuntimeServices,
  applied: readonly AppliedBudget[],
  usage: ModelUsage | undefined,
): Promise<void> {
  if (applied.length === 0) return;
  try {
    await ledgerOf(services).charge(
      applied.map((a) => a.charge),
      { modelCalls: 1, inputTokens: usage?.inputTokens ?? 0, outputTokens: usage?.outputTokens ?? 0 },
    );
  } catch (error) {
    services.logger.log({
      level: LogLevel.Error,
      event: "budget.charge-failed",
      message: `a model call was not counted in its budgets: ${error instanceof Error ? error.message : String(error)}`,
      fields: { budgets: applied.map((a) => a.charge.key.budget) },
      at: services.clock.now(),
    });
  }
}
