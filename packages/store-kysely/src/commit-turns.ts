/**
 * How long a store's write transactions go at most without looking for writes side by side, by letting
 * the event loop turn once before a commit. On a synchronous driver a pass that does no I/O moves from
 * one write to the next by promise jobs alone, and timers (a lease's renewal, a deadline) and I/O
 * callbacks wait until the loop turns: this also bounds that wait. @internal
 */
export const TURN_AT_LEAST_EVERY_MS = 10;

/**
 * Decides, for a group-commit transaction whose queue is empty, whether it lets the event loop turn once
 * before it commits, so that writes issued meanwhile join its commit. A turn is a poll of the system's
 * I/O: on an idle loop a few microseconds for nothing, several times in each execution. So a transaction
 * turns the loop:
 *
 * - when the last unit it ran settled before the commit (resolved once applied, or failed alone): its
 *   caller goes on now, and its next write may be on its way;
 * - otherwise, while such looks find writes side by side (executions running at once, whose writes
 *   then share a commit), and at least every {@link TURN_AT_LEAST_EVERY_MS} after one that found none.
 *
 * Where every caller waits for its own commit and nobody else writes, transactions commit at once but
 * for that look every 10 ms.
 * @internal
 */
export class CommitTurns {
  readonly #now: () => number;
  /** Whether the last look for writes side by side found one. */
  #sideBySide = true;
  /** When that look was. */
  #lookedAt: number;

  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
    this.#lookedAt = now();
  }

  /** Whether to turn the loop before committing; `lastWent`: the last unit run settled before the commit. */
  wanted(lastWent: boolean): boolean {
    return lastWent || this.#sideBySide || this.#now() - this.#lookedAt >= TURN_AT_LEAST_EVERY_MS;
  }

  /** What the turn found: whether a write joined; `lastWent` as given to {@link wanted}. */
  turned(lastWent: boolean, found: boolean): void {
    // A write after a caller went on is that caller's own, most likely: it says nothing of others.
    if (lastWent) return;
    this.#lookedAt = this.#now();
    this.#sideBySide = found;
  }
}
