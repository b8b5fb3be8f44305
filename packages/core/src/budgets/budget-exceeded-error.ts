import { AgbossError } from "../errors/agboss-error.js";
import { ErrorCode } from "../errors/error-codes.js";

/** Where a budget is declared. */
export type BudgetLevel = "application" | "workflow" | "execution";

/** What {@link BudgetExceededError} reports. */
export interface BudgetExceededDetails {
  /** The budget's name; `execution` for an execution's budget. */
  readonly budget: string;
  readonly level: BudgetLevel;
  /** The limit reached. */
  readonly limit: "modelCalls" | "tokens";
  readonly max: number;
  readonly spent: number;
  /** The tenant whose spend it is; undefined for a budget shared by every tenant. */
  readonly tenantId: string | undefined;
  /** When the window starts afresh (ISO 8601); undefined for a budget without a window. */
  readonly resetsAt: string | undefined;
  /** Who was about to call a model, e.g. `agent:refund-agent`. */
  readonly caller: string;
}

function advice(details: BudgetExceededDetails): string {
  const wait = details.resetsAt === undefined ? "" : ` or wait until ${details.resetsAt}`;
  switch (details.level) {
    case "execution":
      return "Start it with a larger app.execute(…, { budget }), or raise the workflow's executionBudget.";
    case "workflow":
      return `Raise it in @Workflow({ budgets })${wait}.`;
    default:
      return `Raise it in @Application({ budgets })${wait}.`;
  }
}

/**
 * A model call was not made: a budget of its tree (the application's, the workflow's or the
 * execution's) is used up. Nothing was spent; a resume that hits it leaves the pause waiting.
 */
export class BudgetExceededError extends AgbossError {
  static override readonly kind: string = "BudgetExceededError";
  /** Which budget, which limit, and how much of it is spent. */
  readonly details: BudgetExceededDetails;

  constructor(details: BudgetExceededDetails) {
    const whose = details.tenantId === undefined ? "all tenants" : `tenant "${details.tenantId}"`;
    super(
      ErrorCode.BudgetExceeded,
      `The ${details.level} budget "${details.budget}" is used up for ${whose}: ${details.spent} of ${details.max} ${details.limit === "modelCalls" ? "model calls" : "tokens"} spent, so ${details.caller} did not call its model. ${advice(details)}`,
    );
    this.details = Object.freeze({ ...details });
  }
}
