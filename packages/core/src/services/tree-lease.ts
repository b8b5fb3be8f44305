import { LogLevel } from "../logging/logger.js";
import { type Fence, LeaseLostError } from "../store/fence.js";
import type { Lease } from "../store/lease-repository.js";
import type { ClockTimer } from "../time/clock.js";
import type { RuntimeServices } from "./runtime-services.js";

/** How long an execution tree's lease lasts unless renewed. */
export const LEASE_TTL_MS = 30_000;
/** How often a holder renews the lease of the tree it moves: three chances before it lapses. */
export const LEASE_RENEW_MS = LEASE_TTL_MS / 3;

/**
 * Confirms in the store, in one fenced statement, that this pass still holds its tree's lease, and
 * extends it. Called right before an approved tool call: a holder that was frozen or cut off past its
 * lease finds out here, and starts nothing. Throws {@link LeaseLostError} when a newer holder has the tree.
 * @internal
 */
export async function confirmLease(services: RuntimeServices, fence: Fence | undefined): Promise<void> {
  if (fence === undefined) return;
  const held = await services.store.leases.renew({ fence, now: services.clock.now(), ttlMs: LEASE_TTL_MS });
  if (!held) throw new LeaseLostError(fence);
}

/**
 * Confirms that this pass still holds its tree's lease, with a read when nothing it wrote waits to be
 * committed (`LeaseRepository.confirm`), else with a renewal as {@link confirmLease} does, which commits
 * with those writes; a lapsed lease nobody took since is renewed the same way. A newer grant, or a
 * released lease, throws {@link LeaseLostError}; a write of the pass that did not commit fails it. For a
 * step whose pause was taken in the commit that began the pass: it has nothing to write before its tool,
 * so in a plain resume the check costs no commit.
 * @internal
 */
export async function confirmLeaseUnchanged(
  services: RuntimeServices,
  fence: Fence | undefined,
): Promise<void> {
  if (fence === undefined) return;
  if (await services.store.leases.confirm(fence, services.clock.now())) return;
  await confirmLease(services, fence);
}

/**
 * Keeps a held lease alive while its pass runs (a heartbeat every {@link LEASE_RENEW_MS} on the Clock).
 * A renewal that finds a newer holder, or renewals that keep failing until the lease would have lapsed,
 * call `lost` with a {@link LeaseLostError}: the pass aborts its signal, and with it any tool running.
 * So does the lease's own expiry when no renewal has answered by then (a store that hangs mid-renewal):
 * from that instant another instance may take the tree, and the pass can no longer tell that it holds it.
 * A renewal the store could not answer is tried again at the next beat. `lost` is called at most once,
 * and the heartbeat stops with it. @internal
 */
export function keepLeaseAlive(
  services: RuntimeServices,
  lease: Lease,
  lost: (error: LeaseLostError) => void,
): { stop(): void } {
  const { clock, store, logger } = services;
  let expiresAt = lease.expiresAt;
  let timer: ClockTimer | undefined;
  let watchdog: ClockTimer | undefined;
  let stopped = false;
  // The last renewal's failure since one succeeded: what the lease was lost to when it expires.
  let failure: unknown;
  const stop = () => {
    stopped = true;
    timer?.cancel();
    watchdog?.cancel();
  };
  const lose = (error: LeaseLostError) => {
    if (stopped) return;
    stop();
    lost(error);
  };
  // Set at the lease's expiry as last renewed; a renewal that answers in time sets it again, later.
  const watch = (atMs = expiresAt) => {
    watchdog?.cancel();
    watchdog = clock.setTimer(atMs - clock.now(), () => {
      if (stopped) return;
      const cause =
        failure ??
        new Error(
          `no renewal of the lease "${lease.key}" answered before it expired at ${new Date(expiresAt).toISOString()}`,
        );
      lose(new LeaseLostError(lease, { cause }));
    });
  };
  // The renewal's promise is the timer's: a clock that jumps (the testing kit's) lets it answer before
  // the watchdog's instant comes, as it would with time passing.
  const beat = (delayMs = LEASE_RENEW_MS) => {
    timer = clock.setTimer(delayMs, () => {
      if (stopped) return;
      const now = clock.now();
      return store.leases.renew({ fence: lease, now, ttlMs: LEASE_TTL_MS }).then(
        (held) => {
          if (stopped) return;
          if (!held) return lose(new LeaseLostError(lease));
          expiresAt = now + LEASE_TTL_MS;
          failure = undefined;
          watch();
          beat();
        },
        (error: unknown) => {
          if (stopped) return;
          // The store found a newer holder while it refused the renewal: lost now, not once it lapses.
          if (error instanceof LeaseLostError) return lose(error);
          failure = error;
          logger.log({
            level: LogLevel.Warn,
            event: "lease.renew-failed",
            message: `renewing the lease ${lease.key} failed: ${error instanceof Error ? error.message : String(error)}`,
            fields: { key: lease.key },
            at: clock.now(),
          });
          if (clock.now() >= expiresAt) return lose(new LeaseLostError(lease, { cause: error }));
          beat();
        },
      );
    });
  };
  // A pass that begins with less than a beat of its lease left (the caller's awaited event handlers took
  // their time) renews at once, and gives that renewal a beat to answer before the watchdog counts it
  // as hung: a lapsed lease nobody took is renewed like a current one.
  const left = expiresAt - clock.now();
  if (left < LEASE_RENEW_MS) {
    watch(clock.now() + LEASE_RENEW_MS);
    beat(0);
  } else {
    watch();
    beat();
  }
  return { stop };
}
