import { AgbossError, hasCause } from "../errors/agboss-error.js";
import { ErrorCode } from "../errors/error-codes.js";

/**
 * The proof that a pass holds an execution tree's lease. Every checkpoint and pause write of the pass
 * carries it, and the store rejects the write, in the same transaction, once a newer holder took the lease.
 */
export interface Fence {
  /** The lease's key: one per execution tree (a tenant's thread). */
  readonly key: string;
  /** The epoch the holder was granted; a newer acquisition has a larger one. */
  readonly epoch: number;
}

/** Where a fenced pass puts its {@link Fence} in LangGraph's `config.configurable`. */
export const FENCE_CONFIG_KEY = "agboss_fence";

/** Reads the fence a LangGraph config carries, if any. */
export function fenceOf(config: { configurable?: Record<string, unknown> } | undefined): Fence | undefined {
  const value = config?.configurable?.[FENCE_CONFIG_KEY];
  if (typeof value !== "object" || value === null) return undefined;
  const { key, epoch } = value as Partial<Fence>;
  return typeof key === "string" && typeof epoch === "number" ? { key, epoch } : undefined;
}

/** A write was refused because another holder took the execution tree's lease since this pass took it. */
export class LeaseLostError extends AgbossError {
  static override readonly kind: string = "LeaseLostError";
  readonly fence: Fence;

  constructor(fence: Fence, options: { cause?: unknown } = {}) {
    super(
      ErrorCode.LeaseLost,
      `The lease "${fence.key}" (epoch ${fence.epoch}) was taken over by a newer holder; this pass's writes were refused. ` +
        "Another instance continues the execution: nothing needs to be done here.",
      options,
    );
    this.fence = fence;
  }
}

/** Whether an error is (or was caused by) a lost lease. */
export function isLeaseLost(error: unknown): boolean {
  return hasCause(error, LeaseLostError);
}
