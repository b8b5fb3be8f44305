/** A timer set on a {@link Clock}. */
export interface ClockTimer {
  /** Stops the timer; its callback will not run. */
  cancel(): void;
}

/**
 * The application's time. Deadlines, timeouts, leases, retention and the recovery sweep all read it,
 * so a test that moves it (`clock.advance(hours(25))`) moves all of them.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /**
   * Runs `callback` once `delayMs` milliseconds have passed on this clock. A callback that starts work
   * of its own (a lease renewal) returns its promise: a clock that moves in jumps (the testing kit's
   * `TestClock`) lets that work settle before it fires a later timer, as time passing would.
   */
  setTimer(delayMs: number, callback: () => unknown): ClockTimer;
}

/** The wall clock. Its timers do not keep the process alive. */
export class SystemClock implements Clock {
  now(): number {
    return Date.now();
  }

  setTimer(delayMs: number, callback: () => unknown): ClockTimer {
    const handle = setTimeout(callback, Math.max(0, delayMs));
    handle.unref?.();
    return { cancel: () => clearTimeout(handle) };
  }
}

/** Resolves after `delayMs` on `clock`, or rejects with the signal's reason once it aborts. */
export function sleep(clock: Clock, delayMs: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      timer.cancel();
      reject(signal?.reason);
    };
    const timer = clock.setTimer(delayMs, () => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    });
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
