import { PauseAnswerer, PauseStatus } from "@agboss/core";
import type { PauseRecord } from "@agboss/core/store";
import type { CheckedCaller } from "./inbox-caller.js";
import type { InboxContext } from "./inbox-context.js";

/** @internal True when the caller's inbox holds this pause: their own thread asks them, or a role they answer. */
export function isVisibleTo(pause: PauseRecord, caller: CheckedCaller): boolean {
  if (pause.tenantId !== caller.tenantId) return false;
  if (pause.answeredBy === PauseAnswerer.ThreadOwner) return pause.ownerId === caller.ownerId;
  return caller.answeredBy !== undefined && caller.roles.includes(pause.channel);
}

/**
 * @internal The caller's pending pauses, newest first, at most `maxPauses`: those their threads ask them
 * and those of the roles they answer.
 */
export async function pendingPauses(context: InboxContext, caller: CheckedCaller): Promise<PauseRecord[]> {
  const { store } = context.app;
  const { tenantId } = caller;
  const statuses = [PauseStatus.Pending];
  const lists = await Promise.all([
    caller.ownerId === undefined
      ? Promise.resolve([])
      : store.pauses.list({ tenantId, statuses, ownerId: caller.ownerId }),
    ...caller.roles.map((channel) => store.pauses.list({ tenantId, statuses, channel })),
  ]);
  const byId = new Map<string, PauseRecord>();
  for (const pause of lists.flat()) {
    if (isVisibleTo(pause, caller)) byId.set(pause.pauseId, pause);
  }
  return [...byId.values()]
    .sort((a, b) => b.askedAt - a.askedAt || a.pauseId.localeCompare(b.pauseId))
    .slice(0, context.maxPauses);
}
