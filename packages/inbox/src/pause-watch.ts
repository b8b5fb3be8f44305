import { LogLevel } from "@agboss/core";
import type { CheckedCaller } from "./inbox-caller.js";
import type { InboxContext } from "./inbox-context.js";
import type { InboxClosed, InboxEvents, InboxPause } from "./inbox-types.js";
import { pendingPauses, RoleLists } from "./pending-pauses.js";

/** @internal One event of the stream. */
export type InboxEvent =
  | { readonly type: "asked"; readonly data: InboxEvents["asked"] }
  | { readonly type: "closed"; readonly data: InboxEvents["closed"] };

type Listener = (event: InboxEvent) => void;

interface Watched {
  readonly caller: CheckedCaller;
  /** Each listener with the pauses it knows of: the list it was sent first, then each read's. */
  readonly listeners: Map<Listener, Set<string>>;
  timer: ReturnType<typeof setTimeout> | undefined;
  polling: Promise<void> | undefined;
}

/**
 * @internal Watches the store for each signed-in person's pending pauses, so that a pause asked,
 * answered or withdrawn by any instance sharing the store reaches every open page: one read per
 * person every `pollIntervalMs`, shared by all their pages on this instance. An answer given through
 * this instance asks for a read at once.
 */
export class PauseWatch {
  readonly #context: InboxContext;
  readonly #watched = new Map<string, Watched>();
  readonly #roleLists: RoleLists;

  constructor(context: InboxContext) {
    this.#context = context;
    // Half an interval: every person's read in one round shares a role's list, the next round reads anew.
    this.#roleLists = new RoleLists(Math.max(1, Math.floor(context.pollIntervalMs / 2)));
  }

  /** The caller's pending pauses as the page shows them, newest first, read from the store now. */
  async list(caller: CheckedCaller): Promise<InboxPause[]> {
    return (await pendingPauses(this.#context, caller)).map((p) => this.#context.views.view(p));
  }

  /** The same, sharing each role's read with the other people watching it. */
  async #watchedList(caller: CheckedCaller): Promise<InboxPause[]> {
    return (await pendingPauses(this.#context, caller, this.#roleLists)).map((p) =>
      this.#context.views.view(p),
    );
  }

  /**
   * Calls `listener` with every change to the caller's pauses since `known` (the list it was sent), until
   * the returned function is called.
   */
  subscribe(caller: CheckedCaller, known: readonly InboxPause[], listener: Listener): () => void {
    const key = JSON.stringify(caller);
    let watched = this.#watched.get(key);
    if (watched === undefined) {
      watched = { caller, listeners: new Map(), timer: undefined, polling: undefined };
      this.#watched.set(key, watched);
      this.#schedule(watched, this.#context.pollIntervalMs);
    }
    watched.listeners.set(listener, new Set(known.map((p) => p.pauseId)));
    const entry = watched;
    return () => {
      entry.listeners.delete(listener);
      if (entry.listeners.size === 0) {
        clearTimeout(entry.timer);
        this.#watched.delete(key);
      }
    };
  }

  /** Reads every watched list now: something changed through this instance. */
  refresh(tenantId: string): void {
    this.#roleLists.forget(tenantId);
    for (const watched of this.#watched.values()) {
      if (watched.caller.tenantId === tenantId) this.#schedule(watched, 0);
    }
  }

  #schedule(watched: Watched, delay: number): void {
    clearTimeout(watched.timer);
    watched.timer = setTimeout(() => {
      if (watched.polling !== undefined) {
        // A read is under way: read again right after it.
        void watched.polling.then(() => this.#schedule(watched, 0));
        return;
      }
      watched.polling = this.#poll(watched).finally(() => {
        watched.polling = undefined;
        if (watched.listeners.size > 0) this.#schedule(watched, this.#context.pollIntervalMs);
      });
    }, delay);
    watched.timer.unref?.();
  }

  async #poll(watched: Watched): Promise<void> {
    let now: Map<string, InboxPause>;
    try {
      now = new Map((await this.#watchedList(watched.caller)).map((p) => [p.pauseId, p]));
    } catch (error) {
      const { logger, clock } = this.#context.internals;
      logger.log({
        level: LogLevel.Warn,
        event: "inbox.poll-failed",
        message: `reading the inbox of tenant ${watched.caller.tenantId} failed; trying again in ${this.#context.pollIntervalMs} ms: ${error instanceof Error ? error.message : String(error)}`,
        fields: { tenantId: watched.caller.tenantId },
        at: clock.now(),
      });
      return;
    }
    const closedOnes = new Map<string, Promise<InboxClosed>>();
    for (const [listener, known] of watched.listeners) {
      const events: InboxEvent[] = [];
      for (const [pauseId, pause] of now) {
        if (!known.has(pauseId)) events.push({ type: "asked", data: { pause } });
      }
      for (const pauseId of known) {
        if (now.has(pauseId)) continue;
        let closed = closedOnes.get(pauseId);
        if (closed === undefined) {
          closed = this.#closed(watched.caller, pauseId);
          closedOnes.set(pauseId, closed);
        }
        const found = await closed;
        // Still pending: only pushed out of the newest maxPauses; the page keeps it.
        if (found.status !== "pending") events.push({ type: "closed", data: found });
      }
      // A listener that left while the store was read is told nothing more.
      if (!watched.listeners.has(listener)) continue;
      watched.listeners.set(listener, new Set(now.keys()));
      for (const event of events) listener(event);
    }
  }

  async #closed(caller: CheckedCaller, pauseId: string): Promise<InboxClosed> {
    const pause = await this.#context.app.store.pauses
      .findByTenantIdAndPauseId(caller.tenantId, pauseId)
      .catch(() => undefined);
    if (pause === undefined) return { pauseId, status: "gone" };
    return {
      pauseId,
      status: pause.status,
      ...(pause.resolution === undefined ? {} : { resolution: pause.resolution }),
      ...(pause.answer?.responder === undefined ? {} : { by: pause.answer.responder }),
      ...(pause.resolvedAt === undefined ? {} : { at: new Date(pause.resolvedAt).toISOString() }),
    };
  }
}
