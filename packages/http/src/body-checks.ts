import { type DtoIssue, DtoValidationError } from "@agboss/core";

/** The longest `threadId` a start accepts, in characters. */
export const MAX_THREAD_ID_CHARS = 256;

/**
 * @internal A body as a record with only the `allowed` members, or the issues that say why not (every
 * unknown member named), so a 400 lists every field at once.
 */
export function objectBody(
  body: unknown,
  allowed: readonly string[],
  issues: DtoIssue[],
): Record<string, unknown> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    issues.push({ path: "", message: "the body must be a JSON object" });
    return {};
  }
  const record = body as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!allowed.includes(key))
      issues.push({ path: key, message: `unknown field; the body takes ${allowed.join(", ")}` });
  }
  return record;
}

/** @internal Throws the issues as one DtoValidationError, when there are any. */
export function throwIssues(dto: string, issues: readonly DtoIssue[]): void {
  if (issues.length > 0) throw new DtoValidationError(dto, issues);
}
