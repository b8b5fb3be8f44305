import { describe, expect, test } from "vitest";
import type { LogEntry } from "../../src/logging/logger.js";
import type { RuntimeServices } from "../../src/services/runtime-services.js";
import { keepLeaseAlive, LEASE_RENEW_MS, LEASE_TTL_MS } from "../../src/services/tree-lease.js";
import { LeaseLostError, MemoryStore } from "../../src/store/index.js";
import type { ClockTimer } from "../../src/time/clock.js";

/** A clock that moves only when told to, running the timers that fall due on the way. */
class SteppedClock {
  #now = 0;
  readonly #timers: { at: number; callback: () => void; cancelled: boolean }[] = [];
  now(): number {
    return this.#now;
  }
  setTimer(delayMs: number, callback: () => void): ClockTimer {
    const timer = { at: this.#now + delayMs, callback, cancelled: false };
    this.#timers.push(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
      },
    };
  }
  /** Moves to `now + ms`, each due timer run in turn and its promises settled before the next. */
  async advance(ms: number): Promise<void> {
    const until = this.#now + ms;
    for (;;) {
      const due = this.#timers
        .filter((timer) => !timer.cancelled && timer.at <= until)
        .sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      this.#timers.splice(this.#timers.indexOf(due), 1);
      this.#now = due.at;
      due.callback();
      for (let i = 0; i < 10; i += 1) await Promise.resolve();
    }
    this.#now = until;
  }
}

/** The services the heartbeat uses, on a memory store whose renewals `renew` answers. */
async function heartbeatOn(renew: () => Promise<boolean>) {
  const store = new MemoryStore();
  const clock = new SteppedClock();
  const logs: LogEntry[] = [];
  const lease = await store.leases.acquire({ key: "acme/t-1", holder: "a:1", now: 0, ttlMs: LEASE_TTL_MS });
  if (lease === undefined) throw new Error("not granted");
  Object.defineProperty(store.leases, "renew", { value: renew });
  const services = { store, clock, logger: { log: (entry: LogEntry) => logs.push(entry) } };
  const lost: LeaseLostError[] = [];
  const beat = keepLeaseAlive(services as unknown as RuntimeServices, lease, (error) => lost.push(error));
  return { clock, logs, lost, beat };
}

describe("keepLeaseAlive", () => {
  test("a renewal the store refuses with LeaseLostError loses the lease at that beat, not once it would lapse", async () => {
    const { clock, lost, logs, beat } = await heartbeatOn(() =>
      Promise.reject(new LeaseLostError({ key: "acme/t-1", epoch: 1 })),
    );
    await clock.advance(LEASE_RENEW_MS);
    expect(lost).toHaveLength(1);
    expect(lost[0]).toBeInstanceOf(LeaseLostError);
    expect(logs).toEqual([]);
    beat.stop();
  });

  test("a renewal that fails otherwise is tried again at each beat, and the lease is lost once it would have lapsed", async () => {
    const { clock, lost, logs, beat } = await heartbeatOn(() =>
      Promise.reject(new Error("store unreachable")),
    );
    await clock.advance(LEASE_RENEW_MS * 2);
    expect(lost).toEqual([]);
    expect(logs.map((entry) => entry.event)).toEqual(["lease.renew-failed", "lease.renew-failed"]);
    await clock.advance(LEASE_RENEW_MS);
    expect(lost).toHaveLength(1);
    expect(lost[0]?.cause).toBeInstanceOf(Error);
    beat.stop();
  });
});
