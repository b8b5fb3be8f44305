import type { AssembledFlow } from "../assembly/assembled-application.js";
import type { BudgetLimits } from "../budgets/budget.js";
import type { ExecutionFrame } from "../container/execution-context.js";
import { UnknownWorkflowStartError } from "../errors/app-errors.js";
import { UnknownPauseError } from "../pauses/pause-errors.js";
import type { ExecutionRecord } from "../records/execution-record.js";
import { ExecutionStatus } from "../records/execution-status.js";
import type { RuntimeServices } from "../services/runtime-services.js";
import type { StoredExecution } from "../store/stored-execution.js";

/** A pass's command meaning "resume every resolved pause of the tree". */
export const CONTINUE = Symbol("continue");

/** What a pass needs of an execution tree. */
export interface Tree {
  readonly flow: AssembledFlow;
  readonly frame: ExecutionFrame;
  readonly startedAt: number;
  readonly input: unknown;
  readonly budget?: BudgetLimits | undefined;
  /** The root execution as stored when the tree was read back (a resume, a recovery); undefined on a start. */
  readonly stored?: StoredExecution | undefined;
}

/** The statuses an execution ends in. */
export const ENDED: ReadonlySet<string> = new Set([
  ExecutionStatus.Completed,
  ExecutionStatus.Failed,
  ExecutionStatus.Cancelled,
]);

/** Rebuilds what a pass needs from the stored root execution. */
export async function readTree(
  services: RuntimeServices,
  tenantId: string,
  rootExecutionId: string,
): Promise<Tree> {
  const stored = await services.store.executions.findByTenantIdAndExecutionId(tenantId, rootExecutionId);
  if (stored === undefined) throw new UnknownPauseError(rootExecutionId);
  const record = stored.record as ExecutionRecord;
  const flow = [...services.assembled.flows.values()].find((f) => f.start.name === record.start);
  if (flow === undefined) throw new UnknownWorkflowStartError(record.start, []);
  return {
    flow,
    stored,
    startedAt: Date.parse(record.startedAt),
    input: record.input,
    budget: record.budget,
    frame: {
      tenant: record.tenant,
      ownerId: record.ownerId,
      threadId: record.threadId,
      executionId: record.executionId,
      rootExecutionId: record.rootExecutionId,
      workflow: record.workflow,
      env: services.env,
      step: undefined,
      signal: new AbortController().signal,
    },
  };
}
