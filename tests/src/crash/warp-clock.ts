import type { Clock, ClockTimer } from "@agboss/core";

interface PendingTimer {
  readonly deadline: number;
  readonly callback: () => void;
  handle: ReturnType<typeof setTimeout> | undefined;
}

/**
 * The system clock shifted by an offset that can jump forward (a warp), as if the process had been
 * frozen that long: timers whose deadline the jump passed fire at once, like a real stall's would.
 * Its timers do not keep the process alive, like {@link SystemClock}'s.
 */
export class WarpClock implements Clock {
  #offsetMs: number;
  readonly #timers = new Set<PendingTimer>();

  constructor(offsetMs = 0) {
    this.#offsetMs = offsetMs;
  }

  get offsetMs(): number {
    return this.#offsetMs;
  }

  now(): number {
    return Date.now() + this.#offsetMs;
  }

  setTimer(delayMs: number, callback: () => void): ClockTimer {
    const timer: PendingTimer = { deadline: this.now() + Math.max(0, delayMs), callback, handle: undefined };
    this.#timers.add(timer);
    this.#schedule(timer);
    return {
      cancel: () => {
        if (timer.handle !== undefined) clearTimeout(timer.handle);
        this.#timers.delete(timer);
      },
    };
  }

  /** Moves the clock to `offsetMs` past the system clock; pending timers are set again for the new time. */
  warp(offsetMs: number): void {
    this.#offsetMs = offsetMs;
    for (const timer of this.#timers) {
      if (timer.handle !== undefined) clearTimeout(timer.handle);
      this.#schedule(timer);
    }
  }

  #schedule(timer: PendingTimer): void {
    timer.handle = setTimeout(
      () => {
        this.#timers.delete(timer);
        timer.callback();
      },
      Math.max(0, timer.deadline - this.now()),
    );
    timer.handle.unref?.();
  }
}
