import { randomUUID } from "node:crypto";
import type { RuntimeServices } from "../services/runtime-services.js";
import { LEASE_TTL_MS } from "../services/tree-lease.js";
import type { Lease, LeaseRepository } from "../store/lease-repository.js";

/**
 * Takes execution trees' leases for this process: each acquisition under a holder id of its own.
 * @internal
 */
export class TreeLeases {
  readonly #services: RuntimeServices;
  readonly #assertOpen: () => void;
  readonly #holder = randomUUID();
  #acquisitions = 0;

  /** `assertOpen` throws once the app is closed: a waiting acquisition gives up then. */
  constructor(services: RuntimeServices, assertOpen: () => void) {
    this.#services = services;
    this.#assertOpen = assertOpen;
  }

  /** Takes a tree's lease if it is free or lapsed; undefined when another holder has it. */
  tryAcquire(key: string): Promise<Lease | undefined> {
    const { store, clock } = this.#services;
    return store.leases.acquire({ key, holder: this.nextHolder(), now: clock.now(), ttlMs: LEASE_TTL_MS });
  }

  /** Takes a tree's lease even from a live holder, whose next fenced write then fails (see `takeOver`). */
  takeOver(key: string): Promise<Lease | undefined> {
    const { store, clock } = this.#services;
    return store.leases.acquire({
      key,
      holder: this.nextHolder(),
      now: clock.now(),
      ttlMs: LEASE_TTL_MS,
      takeOver: true,
    });
  }

  /**
   * Lets go of `lease` only if this very grant is on record (same holder, same epoch). For a lease taken
   * inside a unit of work that failed: a unit may end without its writes (Postgres turns a failed
   * transaction's COMMIT into a rollback), and the next grant of the key then carries the same epoch
   * for another holder, whose lease a release by epoch alone would end.
   */
  releaseIfHeld(lease: Lease): Promise<void> {
    return releaseIfHeld(this.#services.store.leases, lease);
  }

  /**
   * A holder id for one lease acquisition. Each call that moves a tree holds its lease under its own
   * id, so a second call in this process (the sweep, a resume, an execute on the same thread) waits
   * or steps aside like one from another instance, instead of being granted the lease it already holds.
   */
  nextHolder(): string {
    this.#acquisitions += 1;
    return `${this.#holder}:${this.#acquisitions}`;
  }

  /**
   * Takes the tree's lease, waiting while another holder has it (until it returns, or its lease lapses).
   * `check` runs before each try and gives up the wait by throwing (a caller's aborted signal).
   */
  async acquireWaiting(key: string, check: () => void = () => undefined): Promise<Lease> {
    const { store, clock } = this.#services;
    for (;;) {
      this.#assertOpen();
      check();
      const lease = await store.leases.acquire({
        key,
        holder: this.nextHolder(),
        now: clock.now(),
        ttlMs: LEASE_TTL_MS,
      });
      if (lease !== undefined) return lease;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
}

/** {@link TreeLeases.releaseIfHeld} on a lease repository. @internal */
export async function releaseIfHeld(leases: LeaseRepository, lease: Lease): Promise<void> {
  const held = await leases.find(lease.key);
  if (held?.holder === lease.holder && held.epoch === lease.epoch) await leases.release(lease);
}
