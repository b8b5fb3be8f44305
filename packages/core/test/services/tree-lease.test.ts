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
    expect(String(lost[0]?.cause)).toBe("Error: store unreachable");
    beat.stop();
  });

  test("renewals that answer keep the lease past any number of expiries", async () => {
    let renewals = 0;
    const { clock, lost, beat } = await heartbeatOn(() => {
      renewals += 1;
      return Promise.resolve(true);
    });
    await clock.advance(10 * LEASE_TTL_MS);
    expect(lost).toEqual([]);
    expect(renewals).toBe(30);
    beat.stop();
  });

  test("a renewal that never answers loses the lease when it expires, once; its late answer changes nothing", async () => {
    let answer: (held: boolean) => void = () => {};
    let renewals = 0;
    const { clock, lost, logs } = await heartbeatOn(() => {
      renewals += 1;
      return new Promise<boolean>((resolve) => {
        answer = resolve;
      });
    });
    await clock.advance(LEASE_TTL_MS - 1);
    expect(renewals).toBe(1);
    expect(lost).toEqual([]);
    await clock.advance(1);
    expect(lost).toHaveLength(1);
    expect(String(lost[0]?.cause)).toMatch(
      /^Error: no renewal of the lease "acme\/t-1" answered before it expired at 1970-01-01T00:00:30.000Z$/,
    );
    answer(true);
    await clock.advance(10 * LEASE_TTL_MS);
    expect(lost).toHaveLength(1);
    expect(renewals).toBe(1);
    expect(logs).toEqual([]);
  });

  test("after a stop, neither a renewal's answer nor the expiry calls lost", async () => {
    let answer: (held: boolean) => void = () => {};
    const { clock, lost, beat } = await heartbeatOn(
      () =>
        new Promise<boolean>((resolve) => {
          answer = resolve;
        }),
    );
    await clock.advance(LEASE_RENEW_MS);
    beat.stop();
    answer(false);
    await clock.advance(10 * LEASE_TTL_MS);
    expect(lost).toEqual([]);
  });
});
