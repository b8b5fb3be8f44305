import type { Fence } from "./fence.js";

/** A granted lease. */
export interface Lease extends Fence {
  /** Who holds it (an instance id). */
  readonly holder: string;
  /** When it lapses unless renewed, in epoch milliseconds on the application's Clock. */
  readonly expiresAt: number;
}

/** Leases over execution trees: at most one holder at a time moves a tree. */
export interface LeaseRepository {
  /**
   * Takes the lease when it is free or lapsed (`expiresAt <= now`), bumping its epoch; returns undefined
   * when another holder has it. Taking a lease one already holds renews it under a new epoch.
   */
  acquire(args: {
    key: string;
    holder: string;
    now: number;
    ttlMs: number;
    /**
     * Take it even from a live holder (`app.cancel` does, so as not to wait for a pass that may be in
     * a tool or a channel's send): the epoch grows as on any grant, so that holder's next fenced write
     * fails with `LeaseLostError` and its heartbeat stops its pass.
     */
    takeOver?: boolean;
  }): Promise<Lease | undefined>;
  /**
   * Extends a held lease; false when the fence is no longer current (someone took it over) or the lease
   * was released (a renewal that lands after its holder's release does not revive it).
   */
  renew(args: { fence: Fence; now: number; ttlMs: number }): Promise<boolean>;
  /**
   * Whether `fence` holds the lease at `now` (its current epoch, not lapsed, not released) with nothing
   * written under it still waiting to be committed, found without a write: a read of the lease. False
   * when it does not hold the lease, and also when a write of the fence is held back or not committed
   * yet (the store then sends what it held on its way): the caller renews instead, a fenced write that
   * commits with or after those writes. A write of the fence that did not commit fails the call, as it
   * fails a fenced write. The check before an approved tool whose pause was taken in the commit that
   * began the pass.
   */
  confirm(fence: Fence, now: number): Promise<boolean>;
  /**
   * Lets the lease go if the fence is still current; a no-op otherwise. A released lease stays stored,
   * with `expiresAt` {@link RELEASED_LEASE_EXPIRY}: what tells it from one that lapsed.
   */
  release(fence: Fence): Promise<void>;
  /** The lease as stored, lapsed or released or not. */
  find(key: string): Promise<Lease | undefined>;
}

/** The `expiresAt` a released lease is stored with. */
export const RELEASED_LEASE_EXPIRY = 0;
