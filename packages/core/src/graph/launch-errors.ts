import { AgbossError } from "../errors/agboss-error.js";
import { ErrorCode } from "../errors/error-codes.js";

/** Thrown inside a branch whose pause was withdrawn: the branch stops, and its launch's join goes on. @internal */
export class BranchWithdrawnError extends AgbossError {
  static override readonly kind: string = "BranchWithdrawnError";
  /** The launch whose decision withdrew the pause, when the pause recorded it. */
  readonly launch: { readonly executionId: string; readonly launchId: string } | undefined;
  constructor(pauseId: string, launch?: { readonly executionId: string; readonly launchId: string }) {
    super(
      ErrorCode.BranchWithdrawn,
      `The branch waiting on pause "${pauseId}" was withdrawn: its launch no longer needs it.`,
    );
    this.launch = launch;
  }
}

/** A parallel launch's deadline passed before every branch finished. */
export class JoinDeadlineError extends AgbossError {
  static override readonly kind: string = "JoinDeadlineError";
  readonly launchId: string;
  constructor(launchId: string, deadlineMs: number) {
    super(
      ErrorCode.JoinDeadline,
      `Launch ${launchId} did not finish within its deadline of ${deadlineMs} ms (application clock, pauses included); its unfinished branches were withdrawn. Handle it with .onJoinError(JoinDeadlineError, …) or give the launch more time.`,
    );
    this.launchId = launchId;
  }
}
