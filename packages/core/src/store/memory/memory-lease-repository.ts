import { type Fence, LeaseLostError } from "../fence.js";
import { type Lease, type LeaseRepository, RELEASED_LEASE_EXPIRY } from "../lease-repository.js";

/** The expiry a released lease carries. */
const RELEASED = RELEASED_LEASE_EXPIRY;

/** {@link LeaseRepository} in memory. Released leases stay, lapsed, so epochs only grow. */
export class MemoryLeaseRepository implements LeaseRepository {
  readonly #leases = new Map<string, Lease>();

  async acquire(args: {
    key: string;
    holder: string;
    now: number;
    ttlMs: number;
    takeOver?: boolean;
  }): Promise<Lease | undefined> {
    const current = this.#leases.get(args.key);
    const live = current !== undefined && current.holder !== args.holder && current.expiresAt > args.now;
    if (live && args.takeOver !== true) return undefined;
    const lease: Lease = Object.freeze({
      key: args.key,
      holder: args.holder,
      epoch: (current?.epoch ?? 0) + 1,
      expiresAt: args.now + args.ttlMs,
    });
    this.#leases.set(args.key, lease);
    return { ...lease };
  }

  async renew(args: { fence: Fence; now: number; ttlMs: number }): Promise<boolean> {
    const current = this.#current(args.fence);
    if (current === undefined || current.expiresAt === RELEASED) return false;
    this.#leases.set(current.key, Object.freeze({ ...current, expiresAt: args.now + args.ttlMs }));
    return true;
  }

  async confirm(fence: Fence, now: number): Promise<boolean> {
    // Every write of this store is stored as it is made: nothing waits to be committed.
    const current = this.#current(fence);
    return current !== undefined && current.expiresAt > now;
  }

  async release(fence: Fence): Promise<void> {
    this.releaseNow(fence);
  }

  /** {@link release}, synchronously: for a write that releases the lease in the same turn. */
  releaseNow(fence: Fence): void {
    const current = this.#current(fence);
    if (current !== undefined)
      this.#leases.set(current.key, Object.freeze({ ...current, expiresAt: RELEASED }));
  }

  async find(key: string): Promise<Lease | undefined> {
    const lease = this.#leases.get(key);
    return lease === undefined ? undefined : { ...lease };
  }

  /**
   * Throws {@link LeaseLostError} unless `fence` is the lease's current epoch. Synchronous, so a caller
   * that checks and then writes in the same turn cannot be overtaken.
   */
  assertCurrent(fence: Fence | undefined): void {
    if (fence !== undefined && this.#current(fence) === undefined) throw new LeaseLostError(fence);
  }

  #current(fence: Fence): Lease | undefined {
    const lease = this.#leases.get(fence.key);
    return lease !== undefined && lease.epoch === fence.epoch ? lease : undefined;
  }
}
