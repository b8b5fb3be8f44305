import type { AssembledDeadlines } from "../assembly/assembled-application.js";
import type { PauseAnswer, PauseDeadline, PauseRecord } from "../pauses/pause-record.js";
import { PauseResolution, PauseStatus } from "../pauses/pause-status.js";
import type { RuntimeServices } from "../services/runtime-services.js";
import { closeWithAudit, tellReminder, tellWithdrawn, toolOfPause } from "./pause-book.js";

// A pause's reminders and escalation are counted from when it was asked, its expiry from when the role
// that declares it was asked (an escalation carries it over): reminders every `remindEvery`, then one last
// deadline (the escalation or the expiry, whichever comes first). The record keeps its expiry, the next
// deadline and how many reminders went before it; what is due is worked out from the role's deadlines.

/** When a pause's deadlines are counted from. */
interface Asked {
  readonly askedAt: number;
  readonly expiresAt?: number | undefined;
}

/** When the last deadline of a pause falls, and what it does. */
function lastDeadline(deadlines: AssembledDeadlines, asked: Asked) {
  const escalateAt =
    deadlines.escalate === undefined ? undefined : asked.askedAt + deadlines.escalate.afterMs;
  const expireAt = deadlines.expire === undefined ? undefined : asked.expiresAt;
  if (expireAt !== undefined && (escalateAt === undefined || expireAt <= escalateAt)) {
    return { at: expireAt, kind: "expire" as const };
  }
  return escalateAt === undefined ? undefined : { at: escalateAt, kind: "escalate" as const };
}

/** The first deadline strictly after `now`, with `reminders` sent before it; undefined when none is left. */
function nextDeadline(
  deadlines: AssembledDeadlines,
  asked: Asked,
  now: number,
  reminders: number,
): PauseDeadline | undefined {
  const { askedAt } = asked;
  const last = lastDeadline(deadlines, asked);
  const every = deadlines.remindEveryMs;
  const remindAt =
    every === undefined ? undefined : askedAt + (Math.floor(Math.max(0, now - askedAt) / every) + 1) * every;
  if (remindAt !== undefined && (last === undefined || remindAt < last.at))
    return { at: remindAt, reminders };
  return last === undefined ? undefined : { at: last.at, reminders };
}

/**
 * A new pause's expiry and first deadline (both undefined when its role has none): its own expiry is
 * counted from `askedAt`; a carried one is the expiry of the pause it was escalated from.
 * @internal
 */
export function firstDeadline(
  deadlines: AssembledDeadlines | undefined,
  askedAt: number,
  escalatedFrom: PauseRecord | undefined,
): { deadline?: PauseDeadline; expiresAt?: number } {
  if (deadlines === undefined) return {};
  const expire = deadlines.expire;
  const expiresAt =
    expire === undefined
      ? undefined
      : expire.carried === true
        ? (escalatedFrom?.expiresAt ?? askedAt + expire.afterMs)
        : askedAt + expire.afterMs;
  const deadline = nextDeadline(deadlines, { askedAt, expiresAt }, askedAt, 0);
  return {
    ...(deadline === undefined ? {} : { deadline }),
    ...(expiresAt === undefined ? {} : { expiresAt }),
  };
}

/** What answers a pause its expiry resolves. */
function expiryAnswer(outcome: NonNullable<AssembledDeadlines["expire"]>["outcome"]): PauseAnswer {
  switch (outcome.kind) {
    case "reject":
      return { decision: { approved: false, reason: outcome.reason } };
    case "approve":
      return { decision: { approved: true } };
    case "answer":
      return { answer: outcome.answer };
    case "fail":
      return { failure: { message: outcome.message } };
  }
}

/**
 * Acts on the due deadline of a Pending pause, once across instances: a reminder is claimed by moving
 * the pause's deadline (compare-and-set) before its channel is reminded; an escalation or an expiry
 * resolves the pause (Pending → Resolved, atomic), writes its audit entry and tells its channel to take
 * the question back. Returns the resolved pause, whose tree now owes a pass; undefined otherwise (a
 * reminder, nothing due, or another instance acted first).
 * @internal
 */
export async function actOnDeadline(
  services: RuntimeServices,
  pause: PauseRecord,
): Promise<PauseRecord | undefined> {
  const { store, clock } = services;
  const deadline = pause.deadline;
  const now = clock.now();
  if (pause.status !== PauseStatus.Pending || deadline === undefined || deadline.at > now) return undefined;
  // A question still being sent is acted on once it is sent (its deadline stays due until then).
  if (!pause.isSent) return undefined;
  const deadlines = toolOfPause(services.assembled, pause)?.deadlines;
  const last = deadlines === undefined ? undefined : lastDeadline(deadlines, pause);
  if (deadlines === undefined || last === undefined || last.at > now) {
    // A reminder (or a deadline the role no longer has, after a change of its options: moved on quietly).
    const remind = deadlines?.remindEveryMs !== undefined;
    const reminders = deadline.reminders + (remind ? 1 : 0);
    const to = deadlines === undefined ? undefined : nextDeadline(deadlines, pause, now, reminders);
    const claimed = await store.pauses.claimDeadline(pause.tenantId, pause.pauseId, { from: deadline, to });
    if (claimed !== undefined && remind) await tellReminder(services, claimed, reminders);
    return undefined;
  }
  const escalate = last.kind === "escalate" ? deadlines.escalate : undefined;
  const expire = last.kind === "expire" ? deadlines.expire : undefined;
  const resolved = await closeWithAudit(services, () =>
    store.pauses.resolve(
      pause.tenantId,
      pause.pauseId,
      escalate !== undefined
        ? { escalatedTo: escalate.to.name }
        : expiryAnswer((expire as NonNullable<typeof expire>).outcome),
      now,
      { resolution: escalate !== undefined ? PauseResolution.Escalated : PauseResolution.Expired },
    ),
  );
  if (resolved === undefined) return undefined;
  await tellWithdrawn(services, resolved, resolved.resolution as "escalated" | "expired");
  return resolved;
}
