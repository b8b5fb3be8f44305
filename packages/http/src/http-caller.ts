import { HttpError, HttpErrorCode } from "./http-error.js";

/**
 * Who is calling, as the application's `authenticate` hook established it (from a session, a token, a
 * verified signature), never from the request's body.
 *
 * - `ownerId`: the caller acts as a person who owns threads: it starts executions (it becomes their
 *   owner), answers the pauses its threads ask it (`PauseAnswerer.ThreadOwner`), lists its inbox,
 *   cancels its threads and reads their records.
 * - `answeredBy`: the caller answers pauses asked through a channel (`PauseAnswerer.Channel`), e.g. a
 *   reviewer signed in to your approvals page, or a ticket system whose callback you verified.
 *
 * A caller may carry both; each pause is then answered with the credential it asks for.
 */
export interface HttpCaller {
  readonly tenantId: string;
  readonly ownerId?: string | undefined;
  readonly answeredBy?: string | undefined;
}

/** @internal `authenticate`'s result, checked: a bug in the hook is a 500 that says so, not a silent pass. */
export function checkCaller(value: unknown): HttpCaller {
  const problems: string[] = [];
  const c = (typeof value === "object" && value !== null ? value : {}) as Record<string, unknown>;
  if (typeof value !== "object" || value === null) problems.push("it is not an object");
  if (typeof c.tenantId !== "string" || c.tenantId === "") problems.push("tenantId must be a non-empty text");
  for (const key of ["ownerId", "answeredBy"] as const) {
    if (c[key] !== undefined && (typeof c[key] !== "string" || c[key] === ""))
      problems.push(`${key} must be a non-empty text when given`);
  }
  if (c.ownerId === undefined && c.answeredBy === undefined)
    problems.push("give ownerId, answeredBy or both");
  if (problems.length > 0) {
    throw new HttpError({
      status: 500,
      code: HttpErrorCode.CallerInvalid,
      message: `authenticate returned an invalid caller: ${problems.join("; ")}. Return { tenantId, ownerId } or { tenantId, answeredBy }, undefined for 401, or throw HttpError.forbidden(…) for 403.`,
    });
  }
  return {
    tenantId: c.tenantId as string,
    ownerId: c.ownerId as string | undefined,
    answeredBy: c.answeredBy as string | undefined,
  };
}

/** @internal The caller's ownerId, or a 403 saying why this route needs one. */
export function ownerOf(caller: HttpCaller, what: string): string {
  if (caller.ownerId === undefined)
    throw HttpError.forbidden(`Only a caller with an ownerId may ${what}; this one answers pauses only.`);
  return caller.ownerId;
}
