import { type DtoIssue, PauseStatus, type PauseSummary } from "@agboss/core";
import { throwIssues } from "./body-checks.js";
import { type HttpCaller, ownerOf } from "./http-caller.js";
import type { HttpContext } from "./http-context.js";

/** The most pauses one inbox request returns. */
export const MAX_INBOX_LIMIT = 200;
/** How many it returns unless `limit` says otherwise. */
export const DEFAULT_INBOX_LIMIT = 50;

const STATUSES = Object.values(PauseStatus) as readonly string[];
const QUERY = ["status", "threadId", "role", "limit"];

/**
 * `GET /pauses?status=&threadId=&role=&limit=`: the pauses of the caller's threads, pending unless
 * `status` names others (comma-separated). A Channel pause shows no `pauseId`.
 * @internal
 */
export async function inboxRoute(
  context: HttpContext,
  args: { readonly url: URL; readonly caller: HttpCaller },
): Promise<{ pauses: PauseSummary[] }> {
  const { url, caller } = args;
  const ownerId = ownerOf(caller, "list an inbox");
  const issues: DtoIssue[] = [];
  for (const name of new Set(url.searchParams.keys())) {
    if (!QUERY.includes(name))
      issues.push({ path: name, message: `unknown parameter; use ${QUERY.join(", ")}` });
    else if (url.searchParams.getAll(name).length > 1) issues.push({ path: name, message: "give it once" });
  }
  const statuses = (url.searchParams.get("status") ?? PauseStatus.Pending).split(",").map((s) => s.trim());
  for (const status of statuses) {
    if (!STATUSES.includes(status))
      issues.push({ path: "status", message: `"${status}" is no pause status; use ${STATUSES.join(", ")}` });
  }
  const limitText = url.searchParams.get("limit");
  const limit = limitText === null ? DEFAULT_INBOX_LIMIT : Number(limitText);
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_INBOX_LIMIT)
    issues.push({ path: "limit", message: `a whole number from 1 to ${MAX_INBOX_LIMIT}` });
  for (const name of ["threadId", "role"] as const) {
    if (url.searchParams.get(name) === "") issues.push({ path: name, message: "must not be empty" });
  }
  throwIssues("the inbox query", issues);
  const threadId = url.searchParams.get("threadId");
  const role = url.searchParams.get("role");
  const pauses = await context.app.pauses.list({
    tenantId: caller.tenantId,
    ownerId,
    status: statuses as PauseStatus[],
    limit,
    ...(threadId === null ? {} : { threadId }),
    ...(role === null ? {} : { role }),
  });
  return { pauses };
}
