import { setTimeout as sleep } from "node:timers/promises";
import { StoreUnavailableError } from "@agboss/core";
import { notSent } from "./store-dialect-capabilities.js";
import {
  StoreFault,
  type StoreRetryOptions,
  type StoreRetryPolicy,
  storeRetryPolicy,
} from "./store-faults.js";

/**
 * Thrown by a write transaction whose COMMIT failed, around the driver's error: what a lost connection
 * means there (the outcome is unknown) differs from what it means before COMMIT (nothing was written).
 * @internal
 */
export class CommitFailure extends Error {
  constructor(readonly error: unknown) {
    super("COMMIT failed", { cause: error });
  }
}

/** What a {@link FaultRetry} is built from. @internal */
export interface FaultRetryConfig {
  /** The store's name, for the errors it raises, e.g. `postgres:db.internal:5432/main#refunds`. */
  readonly name?: string | undefined;
  /** The dialect's reading of a driver error; without it nothing is retried. */
  readonly faultOf?: ((error: unknown) => StoreFault | undefined) | undefined;
  readonly retry?: StoreRetryOptions | undefined;
}

/**
 * Runs a store operation again after a transient fault, with exponential backoff and jitter, and turns
 * the fault into {@link StoreUnavailableError} (the driver's error as its `cause`) once the attempts are
 * spent. Any other error, `LeaseLostError` and constraint violations included, passes through at once.
 * The one place (with {@link WriteTransactions} deciding what may run again) where the store retries.
 * @internal
 */
export class FaultRetry {
  readonly policy: StoreRetryPolicy;
  /** "The store postgres:…", to open the errors' messages. */
  readonly #store: string;
  readonly #faultOf: ((error: unknown) => StoreFault | undefined) | undefined;

  constructor(config: FaultRetryConfig) {
    this.#store = config.name ? `The store ${config.name}` : "The store";
    this.#faultOf = config.faultOf;
    this.policy = storeRetryPolicy(config.retry);
  }

  /** The transient fault `error` is, if any. */
  faultOf(error: unknown): StoreFault | undefined {
    return this.#faultOf?.(error);
  }

  /** Runs a read (one statement outside any transaction): always safe to run again. */
  read<T>(run: () => Promise<T>): Promise<T> {
    return this.#run(run, "read");
  }

  /**
   * Runs a whole write transaction, `run` beginning and committing it: run again when it failed before
   * COMMIT was sent, or when the database refused the COMMIT and rolled back; never when the connection
   * was lost while COMMIT was in flight (a {@link CommitFailure}), as it may have committed.
   */
  write<T>(run: () => Promise<T>): Promise<T> {
    return this.#run(run, "write");
  }

  /**
   * Runs one idempotent write statement in autocommit: run again after any transient fault, even a
   * connection lost while it was in flight, since running it twice leaves what running it once does.
   */
  statement<T>(run: () => Promise<T>): Promise<T> {
    return this.#run(run, "statement");
  }

  async #run<T>(run: () => Promise<T>, kind: Kind): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await run();
      } catch (thrown) {
        const atCommit = thrown instanceof CommitFailure;
        const error = atCommit ? thrown.error : thrown;
        const fault = this.faultOf(error);
        if (fault === undefined) throw error;
        // A `commit` the driver refused to send (its connection already gone) surely did not commit.
        if (atCommit && fault === StoreFault.ConnectionLost && !notSent(error)) {
          throw new StoreUnavailableError(
            `${this.#store} lost its connection to the database while committing a write ` +
              `(${describe(error)}). The outcome is unknown: the write may or may not have been ` +
              "committed, so it was not run again. Recovery settles it: the recovery sweep continues the " +
              "execution from whatever the store holds; read the data back before acting on it again.",
            { cause: error },
          );
        }
        if (attempt >= this.policy.attempts) throw this.#spent(error, kind, attempt);
        await sleep(this.#delay(attempt));
      }
    }
  }

  #spent(error: unknown, kind: Kind, attempts: number): StoreUnavailableError {
    const tries = attempts === 1 ? "once" : `${attempts} times`;
    return new StoreUnavailableError(
      `${this.#store} could not ${kind === "read" ? "read" : "write"}: it met a transient database fault ${tries} ` +
        `(last: ${describe(error)}).` +
        (kind === "write" ? " No attempt committed, so nothing was written." : "") +
        (kind === "statement"
          ? " The write may have landed (an attempt can lose its connection after the server ran it); " +
            "it is safe to run again, and recovery settles what it left."
          : "") +
        " The database is unreachable, restarting or overloaded: try again once it is back, and check " +
        "the server and the network if this lasts.",
      { cause: error },
    );
  }

  /** About `baseDelayMs · 2^(attempt-1)`, at most `maxDelayMs`, drawn between half and all of it. */
  #delay(attempt: number): number {
    const { baseDelayMs, maxDelayMs } = this.policy;
    const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
    return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
  }
}

type Kind = "read" | "write" | "statement";

/** The driver's message and code, e.g. `terminating connection due to administrator command [57P01]`. */
function describe(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return describe(error.errors[0]);
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  const message = error.message || error.name;
  return typeof code === "string" && !message.includes(code) ? `${message} [${code}]` : message;
}
