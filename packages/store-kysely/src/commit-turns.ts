/**
 * How long a run of write transactions may go without letting the event loop turn: on a synchronous
 * driver a pass that does no I/O moves from one write to the next by promise jobs alone, and timers (a
 * lease's renewal, a deadline) and I/O callbacks wait until the loop turns. @internal
 */
export const TURN_AT_LEAST_EVERY_MS = 10;

/**
 * Decides, for a group-commit transaction whose queue is empty, whether it lets the event loop turn once
 * before it commits, so that writes issued meanwhile join its commit. A turn is a poll of the system's
 * I/O: on an idle loop a few microseconds for nothing, several times in each execution. So a transaction
 * turns the loop:
 *
 * - when a caller it carries went on before its commit (a unit resolved once applied, or one that failed
 *   alone): that caller's next write may be on its way;
 * - while such turns find writes: other callers write side by side (executions running at once), and
 *   their writes share a commit. A turn that finds none stops these until the next one below;
 * - when the loop has not turned for {@link TURN_AT_LEAST_EVERY_MS}: timers and I/O run, and the turn
 *   looks again for writes side by side.
 *
 * Where every caller waits for its own commit and nobody else writes, transactions commit at once.
 * @internal
 */
export class CommitTurns {
  readonly #now: () => number;
  /** Whether the last turn that was not for a caller who went on found a write to take in. */
  #sideBySide = true;
  #turnedAt: number;

  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
    this.#turnedAt = now();
  }

  /** Whether to turn the loop before committing; `callerWent`: a unit's caller went on before the commit. */
  wanted(callerWent: boolean): boolean {
    return callerWent || this.#sideBySide || this.#now() - this.#turnedAt >= TURN_AT_LEAST_EVERY_MS;
  }

  /** What the turn found: whether a write joined; `callerWent` as given to {@link wanted}. */
  turned(callerWent: boolean, found: boolean): void {
    this.#turnedAt = this.#now();
    // A write after a caller went on is that caller's own, most likely: it says nothing of others.
    if (!callerWent) this.#sideBySide = found;
  }
}
