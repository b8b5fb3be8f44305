import type { ChannelAskValue } from "../channels/channel-ask.js";
import type { PauseAnswerer, PauseResolution, PauseStatus } from "./pause-status.js";
import type { PauseStep } from "./pause-step.js";

/** An approval role's decision, as a pause keeps it. */
export interface PauseDecision {
  readonly approved: boolean;
  readonly reason?: string | undefined;
  readonly overrideArguments?: Record<string, unknown> | undefined;
}

/** What answered a pause. */
export interface PauseAnswer {
  /** An approval role's decision as validated (JSON); undefined for a question role. */
  readonly decision?: PauseDecision | undefined;
  /** A question role's answer as validated against its `answer` DTO (JSON); undefined for an approval role. */
  readonly answer?: unknown;
  /** The `ownerId` / `answeredBy` of `app.resume`; undefined when the channel decided at once. */
  readonly responder?: string | undefined;
  /** The free text, when the answer was a reply. */
  readonly reply?: string | undefined;
  /** What reading the reply cost (model usage), when an interpreter's model read it. */
  readonly cost?: unknown;
  /** For a withdrawn pause: the launch whose decision made it obsolete (the outermost, when several did). */
  readonly withdrawnBy?: { readonly executionId: string; readonly launchId: string } | undefined;
  /** For an escalated pause: the role asked instead. */
  readonly escalatedTo?: string | undefined;
  /** For a pause whose expiry fails its step: the failure's message. */
  readonly failure?: { readonly message: string } | undefined;
}

/**
 * A pending pause's next deadline: when the recovery sweep acts on it next (a reminder, an escalation
 * or an expiry), and how many reminders were sent so far. The pair is what a sweep claims atomically.
 */
export interface PauseDeadline {
  /** When it is due, on the application's Clock (ms). */
  readonly at: number;
  /** How many reminders were sent before it. */
  readonly reminders: number;
}

/** One pause: the operational state of a tool call waiting for an answer. */
export interface PauseRecord {
  readonly tenantId: string;
  /** A random 128-bit token made once per pause, before the first send. */
  readonly pauseId: string;
  /** The waiting step's idempotency key: a re-entered step finds the same record. */
  readonly idempotencyKey: string;
  readonly threadId: string;
  readonly rootExecutionId: string;
  /** The execution the pause waits in (the root's, or a child's). */
  readonly executionId: string;
  /** The thread's owner. */
  readonly ownerId: string;
  readonly status: PauseStatus;
  readonly resolution: PauseResolution | undefined;
  /** True once the channel's send returned. */
  readonly isSent: boolean;
  /** The channel asked: a role's name or a concrete channel's. */
  readonly channel: string;
  readonly answeredBy: PauseAnswerer;
  /** The agent whose tool call waits. */
  readonly agent: string;
  /** The question (JSON): the tool and its arguments, unmasked. */
  readonly ask: ChannelAskValue<unknown>;
  /** Where in the tree the step waits (JSON): node, visit, call id, item, launch branches. */
  readonly step: PauseStep;
  readonly answer: PauseAnswer | undefined;
  readonly askedAt: number;
  readonly resolvedAt: number | undefined;
  /** What the channel's send returned to find its question again (`ChannelOutcome.awaitReply({ ref })`), JSON. */
  readonly channelRef?: unknown;
  /**
   * What the approved (or answered) tool call returned, stored the moment it returned, so a step that is
   * run again after a crash or a takeover uses it instead of calling the tool a second time.
   */
  readonly toolResult?: ToolResult | undefined;
  /** The next deadline of a Pending pause whose role has deadlines; undefined when it has none. */
  readonly deadline?: PauseDeadline | undefined;
  /**
   * For a Cancelled pause not marked sent, closed while its step may have been in its channel's `send`
   * (the question may be up, with nobody yet to take it back): when the recovery sweep tells the channel
   * it is withdrawn, on the application's Clock, unless that step claims the telling first. Undefined
   * otherwise.
   */
  readonly withdrawalOwedAt?: number | undefined;
  /**
   * When the pause expires (its role's `expire`, or the one an escalation carried over from the role
   * asked before), on the application's Clock; undefined when it never does. Set once, when created.
   */
  readonly expiresAt?: number | undefined;
}

/** How a tool call that waited on a pause ended: its output, or the error the model was told (JSON). */
export interface ToolResult {
  /** The tool's validated output; undefined when it failed. */
  readonly output?: unknown;
  /** What the model reads when the call failed (`Tool error: …`); undefined when it returned. */
  readonly error?: string | undefined;
}

/** Filters for listing pauses (an inbox). */
export interface PauseQuery {
  readonly tenantId: string;
  readonly statuses?: readonly PauseStatus[];
  readonly channel?: string;
  readonly threadId?: string;
  /** The thread's owner: one person's questions, across their threads. */
  readonly ownerId?: string;
  readonly rootExecutionId?: string;
  /** At most this many, oldest asked first. */
  readonly limit?: number;
}
