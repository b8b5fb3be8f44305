import { AgbossError } from "./agboss-error.js";
import { ErrorCode } from "./error-codes.js";

/** One broken rule found while assembling an application. */
export interface AssemblyViolation {
  /** The rule's code, e.g. `name.kind-suffix`. */
  readonly rule: string;
  /** What is wrong and what to do. */
  readonly message: string;
}

/** The application breaks one or more assembly rules; every violation is listed, not only the first. */
export class AssemblyError extends AgbossError {
  static override readonly kind: string = "AssemblyError";
  readonly violations: readonly AssemblyViolation[];

  constructor(application: string, violations: readonly AssemblyViolation[]) {
    const lines = violations.map((v) => `  [${v.rule}] ${v.message}`).join("\n");
    super(
      ErrorCode.AssemblyInvalid,
      `Application "${application}" cannot start: ${violations.length} problem${violations.length === 1 ? "" : "s"} found.\n${lines}`,
    );
    this.violations = Object.freeze([...violations]);
  }
}
