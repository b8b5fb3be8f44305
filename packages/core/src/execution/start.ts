import type { Tenant } from "../container/execution-context.js";
import { DtoValidationError } from "../errors/dto-validation-error.js";
import { ThreadBusyError, ThreadOwnerError } from "../errors/runtime-errors.js";
import { ExecutionStatus } from "../records/execution-status.js";
import type { RuntimeServices } from "../services/runtime-services.js";
import type { ThreadRecord } from "../store/thread-record.js";

/** A thread a new execution may start on (see {@link threadOpenFor}). @internal */
export interface OpenThread {
  /** The thread's record; undefined for a new thread. */
  readonly record: ThreadRecord | undefined;
  /**
   * Whether the thread's last checkpoint holds no step left unfinished: a new thread, or one whose
   * latest execution completed. One cancelled or failed may have stopped in the middle of a step.
   */
  readonly finished: boolean;
}

/**
 * Whether a new execution may start on a thread, and the thread when it exists: only its owner starts
 * on it, only its own workflow, and not while its latest execution waits on a pause or is still moving
 * (or waits for recovery after its process died: starting over it would orphan that execution).
 * @internal
 */
export async function threadOpenFor(
  services: RuntimeServices,
  at: {
    readonly tenantId: string;
    readonly threadId: string;
    readonly ownerId: string;
    readonly workflowName: string;
  },
): Promise<OpenThread> {
  const { tenantId, threadId, ownerId, workflowName } = at;
  const { store } = services;
  const thread = await store.threads.findByTenantIdAndThreadId(tenantId, threadId);
  if (thread === undefined) return { record: undefined, finished: true };
  if (thread.ownerId !== ownerId) throw new ThreadOwnerError(threadId);
  if (thread.workflowName !== workflowName) {
    throw new ThreadBusyError(
      threadId,
      `it belongs to workflow "${thread.workflowName}"; start ${workflowName} on another thread.`,
    );
  }
  const latest = await store.executions.findByTenantIdAndExecutionId(tenantId, thread.latestExecutionId);
  if (latest?.status === ExecutionStatus.Paused) {
    throw new ThreadBusyError(
      threadId,
      `execution ${latest.executionId} is paused; answer its pauses with app.resume or app.cancel the thread.`,
    );
  }
  if (latest?.status === ExecutionStatus.Running) {
    throw new ThreadBusyError(
      threadId,
      `execution ${latest.executionId} is still running (or being recovered after its process stopped); retry when it has ended.`,
    );
  }
  return { record: thread, finished: latest?.status === ExecutionStatus.Completed };
}

/**
 * Why `tenantId` cannot name a tenant of new executions, if it cannot: it must be a non-empty text
 * without `/`. A tree's lease, and its checkpoints, are keyed `tenantId/threadId`: with a `/` in the
 * tenant, tenant `a` with thread `b/c` and tenant `a/b` with thread `c` would share one key.
 */
function tenantIdProblem(tenantId: unknown, path: string): string | undefined {
  if (typeof tenantId !== "string" || tenantId === "") return `${path} must be a non-empty text`;
  if (tenantId.includes("/")) {
    return `${path} must not contain "/" (a thread's key is tenantId/threadId, so "${tenantId}" could share one with another tenant's thread)`;
  }
  return undefined;
}

/** The tenant of `execute`'s options: `tenant`, or the flat `tenantId`, or the default tenant. */
export function tenantOf(options: { readonly tenant?: Tenant; readonly tenantId?: string }): Tenant {
  const flat = options.tenantId;
  const flatProblem = flat === undefined ? undefined : tenantIdProblem(flat, "tenantId");
  if (flatProblem !== undefined) {
    throw new DtoValidationError("ExecuteOptions", [{ path: "tenantId", message: flatProblem }]);
  }
  if (options.tenant !== undefined) {
    const problem = tenantIdProblem(options.tenant.tenantId, "tenant.tenantId");
    if (problem !== undefined) {
      throw new DtoValidationError("ExecuteOptions", [{ path: "tenant.tenantId", message: problem }]);
    }
    if (flat !== undefined && flat !== options.tenant.tenantId) {
      throw new DtoValidationError("ExecuteOptions", [
        {
          path: "tenantId",
          message: `tenantId "${flat}" and tenant.tenantId "${options.tenant.tenantId}" disagree: give one of them`,
        },
      ]);
    }
    return options.tenant;
  }
  return { tenantId: flat ?? "default" };
}
