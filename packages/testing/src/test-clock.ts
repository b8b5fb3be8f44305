import { type Clock, type ClockTimer, type Duration, toMilliseconds } from "@agboss/core";

/** Where a {@link TestClock} starts unless told: 2026-01-01T00:00:00.000Z. */
export const TEST_CLOCK_START = Date.UTC(2026, 0, 1);

/** Options of {@link TestClock}. */
export interface TestClockOptions {
  /** The first instant, in epoch milliseconds. Default {@link TEST_CLOCK_START}. */
  readonly start?: number;
  /**
   * How many macrotask turns `advance` waits for between timers, so that async timer callbacks (a
   * lease renewal, the sweep's store call) settle before the next timer fires. Default 5.
   */
  readonly settleTurns?: number;
  /**
   * How long, in real milliseconds, `advance` waits for the promise a timer callback returned (a lease
   * renewal on a database) before it fires the next timer. Default 2,000: work that takes longer (a
   * renewal waiting on a lock) goes on settling while later timers fire.
   */
  readonly callbackWaitMs?: number;
}

interface PendingTimer {
  readonly due: number;
  readonly seq: number;
  readonly callback: () => unknown;
}

// Captured at load, so a test that fakes the global timers does not stall advance().
const realSetImmediate = globalThis.setImmediate;
const realSetTimeout = globalThis.setTimeout;
const realClearTimeout = globalThis.clearTimeout;
const nextTurn = () => new Promise<void>((resolve) => realSetImmediate(resolve));

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === "function";
}

/**
 * A {@link Clock} that moves only when the test moves it. Every timer the application sets on it
 * (tool timeouts, lease renewals, the recovery sweep) fires from {@link TestClock.advance}, in due order.
 *
 * @example
 * const clock = new TestClock();
 * const app = await createApp(RefundApplication, { clock });
 * await clock.advance(hours(25)); // retention passes, the sweep runs
 */
export class TestClock implements Clock {
  readonly #timers = new Set<PendingTimer>();
  readonly #settleTurns: number;
  readonly #callbackWaitMs: number;
  #now: number;
  #seq = 0;

  constructor(options: TestClockOptions = {}) {
    this.#now = options.start ?? TEST_CLOCK_START;
    this.#settleTurns = options.settleTurns ?? 5;
    this.#callbackWaitMs = options.callbackWaitMs ?? 2_000;
  }

  /** Milliseconds since the epoch, on this clock. */
  now(): number {
    return this.#now;
  }

  /** Runs `callback` once the clock has been advanced by `delayMs` (a negative delay counts as 0). */
  setTimer(delayMs: number, callback: () => unknown): ClockTimer {
    const timer: PendingTimer = { due: this.#now + Math.max(0, delayMs), seq: this.#seq++, callback };
    this.#timers.add(timer);
    return { cancel: () => void this.#timers.delete(timer) };
  }

  /** How many timers are set and not yet fired or cancelled. */
  get pendingTimers(): number {
    return this.#timers.size;
  }

  /**
   * Moves the clock forward by `duration` (a {@link Duration} or milliseconds), firing every timer that
   * falls due on the way, earliest first, with the clock set to each timer's instant. Timers set by a
   * callback fire too when they fall due before the end. Pending promise work settles before each
   * timer and at the end, and a promise a callback returned (a lease renewal's) is waited for, up to
   * `callbackWaitMs` of real time. If callbacks throw, the first error is thrown once the clock has
   * arrived.
   *
   * @example
   * await clock.advance(seconds(31)); // a 30 s tool timeout fires
   */
  async advance(duration: Duration | number): Promise<void> {
    const ms = toMilliseconds(duration);
    if (!Number.isFinite(ms) || ms < 0)
      throw new RangeError(`TestClock.advance needs a duration >= 0, got ${ms} ms.`);
    const target = this.#now + ms;
    const errors: unknown[] = [];
    await this.#settle();
    for (let timer = this.#nextDue(target); timer !== undefined; timer = this.#nextDue(target)) {
      this.#timers.delete(timer);
      this.#now = Math.max(this.#now, timer.due);
      try {
        const work = timer.callback();
        if (isThenable(work)) await this.#within(work, errors);
      } catch (error) {
        errors.push(error);
      }
      await this.#settle();
    }
    this.#now = target;
    await this.#settle();
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, `${errors.length} clock timer callbacks threw`);
  }

  /**
   * Sets the clock to `epochMs` without firing anything; timers that are now due fire on the next
   * `advance` (`advance(0)` fires them at once).
   */
  set(epochMs: number): void {
    this.#now = epochMs;
  }

  #nextDue(target: number): PendingTimer | undefined {
    let next: PendingTimer | undefined;
    for (const timer of this.#timers) {
      if (timer.due > target) continue;
      if (next === undefined || timer.due < next.due || (timer.due === next.due && timer.seq < next.seq))
        next = timer;
    }
    return next;
  }

  /** Waits for `work` to settle, or for `callbackWaitMs` of real time; a rejection is one of `errors`. */
  async #within(work: PromiseLike<unknown>, errors: unknown[]): Promise<void> {
    let timeout: ReturnType<typeof realSetTimeout> | undefined;
    const waited = new Promise<void>((resolve) => {
      timeout = realSetTimeout(resolve, this.#callbackWaitMs);
    });
    try {
      await Promise.race([
        Promise.resolve(work).then(undefined, (error: unknown) => {
          errors.push(error);
        }),
        waited,
      ]);
    } finally {
      realClearTimeout(timeout);
    }
  }

  async #settle(): Promise<void> {
    for (let i = 0; i < this.#settleTurns; i += 1) await nextTurn();
  }
}
