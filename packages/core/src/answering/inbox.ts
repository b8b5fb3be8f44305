import type { AssembledApplication } from "../assembly/assembled-application.js";
import type { PauseQuery } from "../pauses/pause-record.js";
import {
  PauseAnswerer,
  type PauseKind,
  type PauseResolution,
  type PauseStatus,
} from "../pauses/pause-status.js";
import type { Store } from "../store/store.js";
import { kindOfPause, maskedAsk } from "./pause-book.js";

/** Filters of `app.pauses.list`. */
export interface PauseInboxQuery {
  /** Default `default`. */
  readonly tenantId?: string;
  readonly status?: PauseStatus | readonly PauseStatus[];
  /** The channel asked (a role's name or a concrete channel's). */
  readonly role?: string;
  readonly threadId?: string;
  /** The thread's owner: one person's questions across their threads. */
  readonly ownerId?: string;
  readonly limit?: number;
}

/** A pause as an inbox shows it. */
export interface PauseSummary {
  /** Undefined for a Channel pause: its id stays with its channel. */
  readonly pauseId: string | undefined;
  readonly status: PauseStatus;
  readonly resolution: PauseResolution | undefined;
  readonly channel: string;
  readonly answeredBy: PauseAnswerer;
  /** `approval` (answer with a decision) or `question` (answer with the role's answer DTO). */
  readonly kind: PauseKind;
  readonly agent: string;
  readonly threadId: string;
  readonly executionId: string;
  /** The question, sensitive fields masked. */
  readonly ask: unknown;
  readonly askedAt: string;
  readonly resolvedAt: string | undefined;
  readonly responder: string | undefined;
}

/** The pauses `query` selects, as an inbox shows them. @internal */
export async function listPauses(
  store: Store,
  assembled: AssembledApplication,
  query: PauseInboxQuery,
): Promise<PauseSummary[]> {
  const records = await store.pauses.list({
    tenantId: query.tenantId ?? "default",
    ...(query.status === undefined
      ? {}
      : { statuses: Array.isArray(query.status) ? query.status : [query.status as PauseStatus] }),
    ...(query.role === undefined ? {} : { channel: query.role }),
    ...(query.threadId === undefined ? {} : { threadId: query.threadId }),
    ...(query.ownerId === undefined ? {} : { ownerId: query.ownerId }),
    ...(query.limit === undefined ? {} : { limit: query.limit }),
  } satisfies PauseQuery);
  return records.map((p) => ({
    pauseId: p.answeredBy === PauseAnswerer.ThreadOwner ? p.pauseId : undefined,
    status: p.status,
    resolution: p.resolution,
    channel: p.channel,
    answeredBy: p.answeredBy,
    kind: kindOfPause(assembled, p),
    agent: p.agent,
    threadId: p.threadId,
    executionId: p.executionId,
    ask: maskedAsk(assembled, p),
    askedAt: new Date(p.askedAt).toISOString(),
    resolvedAt: p.resolvedAt === undefined ? undefined : new Date(p.resolvedAt).toISOString(),
    responder: p.answer?.responder,
  }));
}
