import { AgbossError } from "./agboss-error.js";
import { ErrorCode } from "./error-codes.js";

/** One field a DTO refused. */
export interface DtoIssue {
  /** Dotted path of the field, e.g. `items.0.amountCents`; empty for the value itself. */
  readonly path: string;
  readonly message: string;
}

/** A value did not match its DTO. Nothing was stored. */
export class DtoValidationError extends AgbossError {
  static override readonly kind: string = "DtoValidationError";
  /** The DTO's name. */
  readonly dto: string;
  /** Every field that failed, not only the first. */
  readonly issues: readonly DtoIssue[];

  constructor(dto: string, issues: readonly DtoIssue[], options: { context?: string; cause?: unknown } = {}) {
    const list = issues.map((i) => `  - ${i.path === "" ? "(value)" : i.path}: ${i.message}`).join("\n");
    const where = options.context === undefined ? "" : ` (${options.context})`;
    super(ErrorCode.DtoInvalid, `Invalid ${dto}${where}:\n${list}\nFix the fields above and send it again.`, {
      cause: options.cause,
    });
    this.dto = dto;
    this.issues = Object.freeze([...issues]);
  }
}
