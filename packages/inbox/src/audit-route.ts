import { type PauseEntry, PauseStatus } from "@agboss/core";
import type { CheckedCaller } from "./inbox-caller.js";
import type { InboxContext } from "./inbox-context.js";
import { InboxErrorCode, inboxError } from "./inbox-errors.js";
import type { InboxAudit, InboxAuditEntry } from "./inbox-types.js";
import { isVisibleTo } from "./pending-pauses.js";

function entryView(entry: PauseEntry): InboxAuditEntry {
  return {
    role: entry.role,
    kind: entry.kind,
    tool: entry.step.toolCall?.tool,
    resolution: entry.resolution,
    responder: entry.responder,
    decision: entry.decision,
    answer: entry.answer,
    askedAt: entry.askedAt,
    resolvedAt: entry.resolvedAt,
  };
}

/**
 * `GET /api/executions/{executionId}`: who answered what in the tree whose root is `executionId`, how
 * and when, and what still waits (a child workflow's id has no record: a 404). For the thread's owner,
 * and for a person who answers one of the roles asked in it; to anyone else a 404, as if it did not
 * exist.
 * @internal
 */
export async function auditRoute(
  context: InboxContext,
  args: { readonly executionId: string; readonly caller: CheckedCaller },
): Promise<InboxAudit> {
  const { executionId, caller } = args;
  const { app } = context;
  const record = await app.record(executionId, { tenantId: caller.tenantId });
  const unknown = inboxError(
    404,
    InboxErrorCode.ExecutionUnknown,
    `No execution "${executionId}" is visible to you.`,
  );
  if (record === undefined) throw unknown;
  // The root's trail holds the whole tree's, its children's included.
  const resolved = record.pauses;
  const waiting = await app.store.pauses.list({
    tenantId: caller.tenantId,
    rootExecutionId: record.rootExecutionId,
    statuses: [PauseStatus.Pending],
  });
  const visible =
    (caller.ownerId !== undefined && record.ownerId === caller.ownerId) ||
    (caller.answeredBy !== undefined && resolved.some((e) => caller.roles.includes(e.role))) ||
    waiting.some((pause) => isVisibleTo(pause, caller));
  if (!visible) throw unknown;
  const entries = [
    ...resolved.map(entryView),
    ...waiting.map(
      (pause): InboxAuditEntry => ({
        role: pause.channel,
        kind: context.views.view(pause).kind,
        tool: pause.ask.tool,
        resolution: "pending",
        responder: undefined,
        decision: undefined,
        answer: undefined,
        askedAt: new Date(pause.askedAt).toISOString(),
        resolvedAt: "",
      }),
    ),
  ].sort((a, b) => a.askedAt.localeCompare(b.askedAt));
  return {
    executionId: record.executionId,
    workflow: record.workflow,
    status: record.status,
    threadId: record.threadId,
    entries,
  };
}
