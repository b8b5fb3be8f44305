import { tellWithdrawn } from "../answering/pause-book.js";
import { actOnDeadline } from "../answering/pause-deadlines.js";
import { StoreUnavailableError } from "../errors/app-errors.js";
import { LogLevel } from "../logging/logger.js";
import type { PauseRecord } from "../pauses/pause-record.js";
import { PauseStatus, type PauseWithdrawalResolution } from "../pauses/pause-status.js";
import { ExecutionStatus } from "../records/execution-status.js";
import type { RuntimeServices } from "../services/runtime-services.js";
import type { Lease } from "../store/lease-repository.js";
import type { ClockTimer } from "../time/clock.js";
import type { ExecutionRecorder } from "./execution-recorder.js";
import type { TreeMover } from "./pass.js";
import { CONTINUE, ENDED, readTree, type Tree } from "./tree.js";
import type { TreeLeases } from "./tree-leases.js";
import { takeForPass } from "./what-to-resume.js";

/** How often the recovery sweep runs, on the application's Clock. */
export const SWEEP_INTERVAL_MS = 30_000;
/** How many trees the sweep reads at a time. */
const SWEEP_PAGE = 100;
/**
 * The most closed pauses one round removes: a long backlog (retention turned on, or shortened, over
 * millions) is worked off over several rounds, so no round's deadlines and stuck trees, nor
 * `app.close()`, wait for all of it.
 */
const RETENTION_PER_ROUND = 10_000;
/** How long an answered pause may wait for its own resumer before the sweep takes it over. */
const RECOVERY_GRACE_MS = 1_000;

/**
 * How the sweep's claim of one tree ended: carried on, found owing nothing (ended, or rested again by
 * another pass since its page was read), or failed (with its lease, if one was taken).
 */
type Claim =
  | { readonly lease: Lease; readonly tree: Tree; readonly answered: PauseRecord | undefined }
  | { readonly lease: Lease; readonly owesNothing: true }
  | { readonly lease?: Lease; readonly failed: unknown };

/**
 * The recovery sweep: every 30 s on the Clock, on every instance, it removes pause records past their
 * retention and carries on the trees that owe work and that nobody moves — answered pauses whose
 * resumer died between the two phases, and trees recorded as running whose holder's lease lapsed.
 * @internal
 */
export class Recovery {
  readonly #services: RuntimeServices;
  readonly #mover: TreeMover;
  readonly #leases: TreeLeases;
  readonly #recorder: ExecutionRecorder;
  readonly #isClosed: () => boolean;
  #sweep: ClockTimer | undefined;
  /** The rounds in flight. */
  readonly #rounds = new Set<Promise<void>>();

  constructor(args: {
    services: RuntimeServices;
    mover: TreeMover;
    leases: TreeLeases;
    recorder: ExecutionRecorder;
    isClosed: () => boolean;
  }) {
    this.#services = args.services;
    this.#mover = args.mover;
    this.#leases = args.leases;
    this.#recorder = args.recorder;
    this.#isClosed = args.isClosed;
  }

  /**
   * @internal Starts the sweep: every 30 s on the Clock it removes resolved pause records past their
   * retention and recovers trees nobody moves (resolved pauses left by a holder that died, or a pass
   * whose holder's lease lapsed).
   */
  start(retentionMs: number): void {
    const { clock } = this.#services;
    const tick = async () => {
      if (this.#isClosed()) return;
      await this.sweepOnce(retentionMs);
      if (!this.#isClosed()) this.#sweep = clock.setTimer(SWEEP_INTERVAL_MS, () => void tick());
    };
    this.#sweep = clock.setTimer(SWEEP_INTERVAL_MS, () => void tick());
  }

  /**
   * Takes a tree's lease if it is free (or lapsed) and carries the tree on from its last checkpoint;
   * skips it when another holder has it. A failure is logged and leaves the tree for the next sweep.
   */
  async #recover(
    tenantId: string,
    threadId: string,
    rootExecutionId: string,
    pauseId: string | undefined,
  ): Promise<void> {
    const { clock, store, logger } = this.#services;
    let answered: PauseRecord | undefined;
    if (pauseId !== undefined) {
      // Another instance sweeping the same page may have taken it since: one read instead of a lease.
      answered = await store.pauses.findByTenantIdAndPauseId(tenantId, pauseId);
      if (answered?.status !== PauseStatus.Resolved) return;
    }
    // Read again under the lease: the read above came before another pass could take the pause.
    const stillAnswered = async (pause: PauseRecord | undefined) =>
      pause !== undefined &&
      (await store.pauses.findByTenantIdAndPauseId(tenantId, pause.pauseId))?.status === PauseStatus.Resolved;
    // One unit of work, as phase 1 of a resume claims its tree: the lease taken, the tree read under it
    // and marked running land in one commit. A failure after the lease was taken is returned, not
    // thrown, so that the unit commits the lease and it is let go below.
    let claimed: Claim | undefined;
    try {
      claimed = await store.atomically(async (): Promise<Claim | undefined> => {
        const lease = await this.#leases.tryAcquire(`${tenantId}/${threadId}`);
        if (lease === undefined) return undefined;
        try {
          const tree = await readTree(this.#services, tenantId, rootExecutionId);
          const status = tree.stored?.status;
          if (status !== undefined && ENDED.has(status)) {
            // Moved by another instance since the page was read, or an answer that came after its tree
            // ended (a cancel racing it): nothing to run. Such a pause leaves the sweep's list as taken.
            if (pauseId !== undefined) await store.pauses.take(tenantId, pauseId, { at: clock.now() }, lease);
            return { lease, owesNothing: true };
          }
          if (status === ExecutionStatus.Paused && !(await stillAnswered(answered))) {
            // Rested by another pass since the page was read: a tree from the running page owes nothing,
            // nor does one whose answered pause that pass took (a pass takes every answered pause of its
            // tree before it rests, so none it could see is left).
            return { lease, owesNothing: true };
          }
          await this.#recorder.markRunning(tree, lease);
          const goesOnFrom =
            answered === undefined ? undefined : await takeForPass(this.#services, answered, { tree, lease });
          return { lease, tree, answered: goesOnFrom };
        } catch (error) {
          return { lease, failed: error };
        }
      });
    } catch (error) {
      // The store is out of reach (retries spent, or a COMMIT whose outcome is unknown): the next tree
      // would meet the same, so the round stops here. Anything else concerns this tree alone.
      if (error instanceof StoreUnavailableError) throw error;
      claimed = { failed: error };
    }
    if (claimed === undefined) return;
    if ("owesNothing" in claimed) {
      await store.leases.release(claimed.lease).catch(() => undefined);
      return;
    }
    if ("failed" in claimed) {
      // Let go only of a grant on record: the unit may have ended without it.
      if (claimed.lease !== undefined) await this.#leases.releaseIfHeld(claimed.lease).catch(() => undefined);
      const error = claimed.failed;
      logger.log({
        level: LogLevel.Warn,
        event: "sweep.recover-failed",
        message: `recovering execution ${rootExecutionId} failed: ${error instanceof Error ? error.message : String(error)}`,
        fields: { executionId: rootExecutionId, tenantId },
        at: clock.now(),
      });
      return;
    }
    const { lease, tree } = claimed;
    answered = claimed.answered;
    if (this.#isClosed()) {
      // Claimed while the app closed: recorded as running with its lease let go, the tree is the next
      // sweep's, on any instance.
      await store.leases.release(lease).catch(() => undefined);
      return;
    }
    logger.log({
      level: LogLevel.Info,
      event: "sweep.recovering",
      message: `recovering execution ${rootExecutionId}`,
      fields: { executionId: rootExecutionId, tenantId },
      at: clock.now(),
    });
    // The step waiting on the answered pause goes on from it as the claim left it: taken there, or as
    // read above (the step's take then checks it is still there).
    await this.#mover
      .move({ tree, lease, first: CONTINUE, withRecord: false, answered })
      .catch((error: unknown) => {
        // The pass has recorded how the tree ended, or left it for the next sweep: only worth a line here.
        logger.log({
          level: LogLevel.Warn,
          event: "sweep.pass-failed",
          message: `recovering execution ${rootExecutionId} stopped: ${error instanceof Error ? error.message : String(error)}`,
          fields: { executionId: rootExecutionId, tenantId },
          at: clock.now(),
        });
      });
  }

  /**
   * Recovers trees page by page, each page read from just after the last one, until a page is not full.
   * Each instance takes a page in its own random order, so instances sweeping at once mostly take
   * different trees, and a backlog is worked off in one sweep, not one page every 30 seconds. As many
   * threads of a page as the store's `recoveryConcurrency` (default 1) are carried on at once, a
   * thread's trees one after the other as they share its lease; the next page is read when the last of
   * them is done.
   */
  async #recoverPages(
    handled: Set<string>,
    nextPage: () => Promise<{
      full: boolean;
      trees: readonly { tenantId: string; threadId: string; rootExecutionId: string; pauseId?: string }[];
    }>,
  ): Promise<void> {
    for (;;) {
      const { full, trees } = await nextPage();
      // The trees of one thread share its lease: one worker takes them one after the other.
      const byThread = new Map<string, (typeof trees)[number][]>();
      for (const tree of trees) {
        const key = `${tree.tenantId}/${tree.threadId}`;
        const same = byThread.get(key);
        if (same === undefined) byThread.set(key, [tree]);
        else same.push(tree);
      }
      const queue = shuffled([...byThread.values()]);
      const work = async () => {
        for (let group = queue.shift(); group !== undefined; group = queue.shift()) {
          for (const tree of group) {
            if (this.#isClosed()) return;
            const root = `${tree.tenantId}/${tree.rootExecutionId}`;
            if (handled.has(root)) continue;
            handled.add(root);
            await this.#recover(tree.tenantId, tree.threadId, tree.rootExecutionId, tree.pauseId);
            // Let timers (lease heartbeats, tool timeouts) and other calls of this process run between
            // trees, even where the store answers synchronously.
            await yieldToEventLoop();
          }
        }
      };
      // Every worker is waited for before the round goes on or fails, so no recovery outlives its sweep.
      const workers = Math.max(1, Math.floor(this.#services.store.recoveryConcurrency ?? 1));
      const settled = await Promise.allSettled(Array.from({ length: workers }, work));
      const failed = settled.find((result) => result.status === "rejected");
      if (failed !== undefined) throw failed.reason;
      if (this.#isClosed()) return;
      // Pages go on from the last row of the one before, so trees this instance cannot take (held by
      // live holders, or unreadable) never hide the ones behind them.
      if (!full) return;
      // A page whose trees were all skipped awaited nothing but the store: yield before the next one, so
      // paging through a large backlog never holds the event loop for more than a page.
      await yieldToEventLoop();
    }
  }

  /**
   * Acts on every due deadline of a Pending pause, page after page in due order; returns the pauses an
   * escalation or an expiry resolved. One pause's failure is logged and leaves it for the next sweep.
   */
  async #actOnDeadlines(): Promise<PauseRecord[]> {
    const { clock, store } = this.#services;
    const resolved: PauseRecord[] = [];
    await this.#eachDuePause(
      (after) =>
        store.pauses.listDueDeadlines({
          now: clock.now(),
          limit: SWEEP_PAGE,
          ...(after === undefined ? {} : { after: { deadlineAt: after.at, ...after } }),
        }),
      (pause) => pause.deadline?.at,
      async (pause) => {
        const done = await actOnDeadline(this.#services, pause);
        if (done !== undefined) resolved.push(done);
      },
      { event: "sweep.deadline-failed", doing: "acting on the deadline of" },
    );
    return resolved;
  }

  /**
   * Tells the channels of cancelled questions whose asker never came back from its `send` (see
   * `PauseRecord.withdrawalOwedAt`), page after page in due order: each claimed first, so that of this
   * sweep, another instance's and the asker's step exactly one tells. One pause's failure is logged;
   * a claimed pause whose channel could not be told is not told again (a withdrawal is best effort).
   */
  async #tellOwedWithdrawals(): Promise<void> {
    const { clock, store } = this.#services;
    await this.#eachDuePause(
      (after) =>
        store.pauses.listOwedWithdrawals({
          now: clock.now(),
          limit: SWEEP_PAGE,
          ...(after === undefined ? {} : { after: { owedAt: after.at, ...after } }),
        }),
      (pause) => pause.withdrawalOwedAt,
      async (pause) => {
        const claimed = await store.pauses.claimWithdrawal(pause.tenantId, pause.pauseId);
        if (claimed !== undefined) {
          await tellWithdrawn(this.#services, claimed, claimed.resolution as PauseWithdrawalResolution);
        }
      },
      { event: "sweep.withdrawal-failed", doing: "taking back the question of" },
    );
  }

  /**
   * Acts on pauses page after page, each page read from just after the last pause of the one before (by
   * the time `dueAt` gives, then tenant, then id), until a page is not full or the app closes. One pause's
   * failure is logged as `failure.event` and leaves it for the next sweep.
   */
  async #eachDuePause(
    page: (
      after: { readonly at: number; readonly tenantId: string; readonly pauseId: string } | undefined,
    ) => Promise<PauseRecord[]>,
    dueAt: (pause: PauseRecord) => number | undefined,
    act: (pause: PauseRecord) => Promise<void>,
    failure: { readonly event: string; readonly doing: string },
  ): Promise<void> {
    const { clock, logger } = this.#services;
    let after: { at: number; tenantId: string; pauseId: string } | undefined;
    for (;;) {
      const pauses = await page(after);
      for (const pause of pauses) {
        if (this.#isClosed()) return;
        try {
          await act(pause);
        } catch (error) {
          logger.log({
            level: LogLevel.Warn,
            event: failure.event,
            message: `${failure.doing} pause ${pause.pauseId} failed: ${error instanceof Error ? error.message : String(error)}`,
            fields: { executionId: pause.executionId, tenantId: pause.tenantId },
            at: clock.now(),
          });
        }
      }
      const last = pauses.at(-1);
      const at = last === undefined ? undefined : dueAt(last);
      if (pauses.length < SWEEP_PAGE || last === undefined || at === undefined) return;
      after = { at, tenantId: last.tenantId, pauseId: last.pauseId };
      await yieldToEventLoop();
    }
  }

  /** @internal One round of the sweep; {@link idle} waits for it. */
  sweepOnce(retentionMs: number): Promise<void> {
    const round = this.#round(retentionMs);
    this.#rounds.add(round);
    const settle = () => this.#rounds.delete(round);
    round.then(settle, settle);
    return round;
  }

  /** Settles once no round of the sweep is in flight (`app.close()` waits for it after stopping them). */
  async idle(): Promise<void> {
    while (this.#rounds.size > 0) await Promise.allSettled([...this.#rounds]);
  }

  async #round(retentionMs: number): Promise<void> {
    const { clock, store } = this.#services;
    await this.#removeExpired(retentionMs);
    try {
      const handled = new Set<string>();
      // Deadlines due (reminders, escalations, expiries), each acted on once across instances; the trees
      // whose pauses they resolved go on at once, like answered ones.
      const resolved = await this.#actOnDeadlines();
      await this.#recoverPages(handled, async () => ({ full: false, trees: resolved }));
      // Answered pauses nobody took (their resumer died between the two phases), oldest first, across
      // tenants: found by their own index, so long-waiting trees cannot crowd them out.
      let afterPause: { resolvedAt: number; tenantId: string; pauseId: string } | undefined;
      await this.#recoverPages(handled, async () => {
        const page = await store.pauses.listResolvedBefore({
          before: clock.now() - RECOVERY_GRACE_MS,
          limit: SWEEP_PAGE,
          ...(afterPause === undefined ? {} : { after: afterPause }),
        });
        const last = page.at(-1);
        if (last !== undefined)
          afterPause = {
            resolvedAt: last.resolvedAt as number,
            tenantId: last.tenantId,
            pauseId: last.pauseId,
          };
        return { full: page.length === SWEEP_PAGE, trees: page };
      });
      // Trees recorded as running whose holder is gone (died, frozen or cut off past its lease): a start
      // that never rested, or a resume past its first phase (its pause may be Taken already). Paused trees
      // owe nothing unless a pause of theirs was answered, which the pages above find.
      let afterExecution: { updatedAt: number; tenantId: string; executionId: string } | undefined;
      await this.#recoverPages(handled, async () => {
        const page = await store.executions.listByStatus(
          [ExecutionStatus.Running],
          SWEEP_PAGE,
          afterExecution,
        );
        const last = page.at(-1);
        if (last !== undefined)
          afterExecution = {
            updatedAt: last.updatedAt,
            tenantId: last.tenantId,
            executionId: last.executionId,
          };
        const settled = clock.now() - RECOVERY_GRACE_MS;
        return {
          full: page.length === SWEEP_PAGE,
          trees: page.filter((e) => e.executionId === e.rootExecutionId && e.updatedAt < settled),
        };
      });
    } catch (error) {
      this.#roundFailed(error);
    }
    // Last, and whatever became of the pages above: questions of cancelled trees whose asker died (or
    // stalled) inside its channel's send. Each call may wait out its tool's timeout on a channel that is
    // down; no tree of this round waits for them.
    if (this.#isClosed()) return;
    try {
      await this.#tellOwedWithdrawals();
    } catch (error) {
      this.#roundFailed(error);
    }
  }

  #roundFailed(error: unknown): void {
    const { clock, logger } = this.#services;
    logger.log({
      level: LogLevel.Error,
      event: "sweep.failed",
      message: String(error),
      fields: {},
      at: clock.now(),
    });
  }

  /**
   * Retention, first in a round: resolved pauses past `retentionMs` (at most {@link RETENTION_PER_ROUND}),
   * and budget counters past their window. A failure of either is logged (and tried again next round)
   * without touching the other or the rest of the round: deadlines and stuck trees do not wait on a
   * removal the store gave up on, nor on more than one round's share of a long one.
   */
  async #removeExpired(retentionMs: number): Promise<void> {
    const { clock, store, logger } = this.#services;
    const failed = (error: unknown) =>
      logger.log({
        level: LogLevel.Warn,
        event: "sweep.retention-failed",
        message:
          "Removing resolved pauses or spent budget counters failed; the next round tries again: " +
          String(error),
        fields: {},
        at: clock.now(),
      });
    const removed = await store.pauses
      .deleteResolvedBefore(clock.now() - retentionMs, RETENTION_PER_ROUND)
      .catch(failed);
    await store.budgets.deleteExpired(clock.now()).catch(failed);
    if (removed !== undefined && removed > 0) {
      logger.log({
        level: LogLevel.Debug,
        event: "sweep.pauses-removed",
        message: `removed ${removed} resolved pauses`,
        fields: { removed },
        at: clock.now(),
      });
    }
  }

  /** Stops the sweep's timer; a round in flight finishes the trees it is carrying on and starts no more. */
  stop(): void {
    this.#sweep?.cancel();
  }
}

/** Lets timers and I/O callbacks run (a store that answers synchronously never gives them a turn). */
function yieldToEventLoop(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}

/** The items in a random order (Fisher–Yates). */
function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i -= 1) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}
