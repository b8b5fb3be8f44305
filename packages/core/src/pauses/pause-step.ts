import type { StepContext, Tenant } from "../container/execution-context.js";
import type { BranchPath } from "../records/branch-path.js";
import type { StepRecord } from "../records/step.js";

/** Where a pause waits, as its record keeps it (JSON): the step, its launch branches, and the frame its channel and interpreter run in. */
export interface PauseStep {
  readonly record: StepRecord;
  /** The launch branches the step waits under, outermost first. */
  readonly branch?: BranchPath;
  readonly context: StepContext;
  readonly tenant: Tenant;
  readonly workflow: { readonly name: string; readonly version: string };
  readonly env: string;
}
