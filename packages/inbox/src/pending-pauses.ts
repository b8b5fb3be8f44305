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
export async function pendingPauses(
  context: InboxContext,
  caller: CheckedCaller,
  lists: RoleLists | undefined = undefined,
): Promise<PauseRecord[]> {
  const { store } = context.app;
  const { tenantId } = caller;
  const statuses = [PauseStatus.Pending];
  const read = await Promise.all([
    caller.ownerId === undefined
      ? Promise.resolve([])
      : store.pauses.list({ tenantId, statuses, ownerId: caller.ownerId }),
    ...caller.roles.map((channel) =>
      lists === undefined
        ? store.pauses.list({ tenantId, statuses, channel })
        : lists.read(tenantId, channel, () => store.pauses.list({ tenantId, statuses, channel })),
    ),
  ]);
  const byId = new Map<string, PauseRecord>();
  for (const pause of read.flat()) {
    if (isVisibleTo(pause, caller)) byId.set(pause.pauseId, pause);
  }
  return [...byId.values()]
    .sort((a, b) => b.askedAt - a.askedAt || a.pauseId.localeCompare(b.pauseId))
    .slice(0, context.maxPauses);
}

/**
 * @internal A role's pending pauses, read once for everyone who answers it: the people watching one
 * role in a tenant share one read per `maxAgeMs` instead of one each.
 */
export class RoleLists {
  readonly #maxAgeMs: number;
  readonly #lists = new Map<string, { readonly at: number; readonly list: Promise<PauseRecord[]> }>();

  constructor(maxAgeMs: number) {
    this.#maxAgeMs = maxAgeMs;
  }

  /** The role's list as read less than `maxAgeMs` ago, else read now. */
  read(tenantId: string, role: string, load: () => Promise<PauseRecord[]>): Promise<PauseRecord[]> {
    const key = JSON.stringify([tenantId, role]);
    const now = Date.now();
    const found = this.#lists.get(key);
    if (found !== undefined && now - found.at < this.#maxAgeMs) return found.list;
    const list = load();
    this.#lists.set(key, { at: now, list });
    list.catch(() => this.#lists.delete(key));
    return list;
  }

  /** Forgets a tenant's lists: something changed through this instance. */
  forget(tenantId: string): void {
    for (const key of this.#lists.keys()) {
      if ((JSON.parse(key) as string[])[0] === tenantId) this.#lists.delete(key);
    }
  }
}
