import { InboxErrorCode, inboxError } from "./inbox-errors.js";
import type { InboxCaller } from "./inbox-options.js";

/** @internal A checked caller: `roles` only with `answeredBy`, each a role the application answers by channel. */
export interface CheckedCaller {
  readonly tenantId: string;
  readonly ownerId: string | undefined;
  readonly answeredBy: string | undefined;
  readonly roles: readonly string[];
}

/** @internal `authenticate`'s result, checked: a bug in the hook is a 500 that says so, not a silent pass. */
export function checkCaller(value: InboxCaller, channelRoles: ReadonlySet<string>): CheckedCaller {
  const problems: string[] = [];
  const c = (typeof value === "object" && value !== null ? value : {}) as Record<string, unknown>;
  if (typeof c.tenantId !== "string" || c.tenantId === "") problems.push("tenantId must be a non-empty text");
  for (const key of ["ownerId", "answeredBy"] as const) {
    if (c[key] !== undefined && (typeof c[key] !== "string" || c[key] === ""))
      problems.push(`${key} must be a non-empty text when given`);
  }
  if (c.ownerId === undefined && c.answeredBy === undefined)
    problems.push("give ownerId, answeredBy or both");
  const roles = c.roles === undefined ? [] : c.roles;
  if (!Array.isArray(roles) || roles.some((r) => typeof r !== "string")) {
    problems.push("roles must be an array of role names");
  } else {
    if (roles.length > 0 && c.answeredBy === undefined)
      problems.push("roles need answeredBy: it is who answers their pauses");
    const unknown = roles.filter((r) => !channelRoles.has(r as string));
    if (unknown.length > 0) {
      const known = [...channelRoles];
      problems.push(
        `${unknown.map((r) => `"${r}"`).join(", ")} ${unknown.length === 1 ? "is no role" : "are no roles"} of this application answered through a channel (${known.length === 0 ? "it has none" : `it has ${known.join(", ")}`})`,
      );
    }
  }
  if (problems.length > 0) {
    throw inboxError(
      500,
      InboxErrorCode.CallerInvalid,
      `authenticate returned a caller the inbox cannot serve: ${problems.join("; ")}. Return { tenantId, ownerId } for a person's own questions, { tenantId, answeredBy, roles } for the roles they answer, or undefined for 401.`,
    );
  }
  return {
    tenantId: c.tenantId as string,
    ownerId: c.ownerId as string | undefined,
    answeredBy: c.answeredBy as string | undefined,
    roles: [...new Set(roles as string[])].sort(),
  };
}
