/**
 * The transient faults a store retries, as its dialect names them (see
 * {@link StoreDialectCapabilities.faultOf}). Every other error reaches the caller as it was thrown.
 */
export const StoreFault = {
  /**
   * The connection or the server went away: a terminated backend, a restart or failover, a reset
   * socket, a server that refuses connections for now. A transaction whose COMMIT had not been sent is
   * rolled back with the connection; one whose COMMIT was in flight may or may not have committed.
   */
  ConnectionLost: "connection-lost",
  /**
   * The database turned the work away and undid it: a lock it could not take (SQLite's busy and
   * locked), a serialization failure, a deadlock, no connection slot free. Running it again is safe.
   */
  Contention: "contention",
} as const;
export type StoreFault = (typeof StoreFault)[keyof typeof StoreFault];

/** How a store retries an operation that met a transient fault. Every field is optional. */
export interface StoreRetryOptions {
  /** How many times an operation is tried in all, the first time included. Default 5; 1 turns retrying off. */
  readonly attempts?: number;
  /** The wait before the first retry, in milliseconds; each later wait doubles it. Default 25. */
  readonly baseDelayMs?: number;
  /** The longest wait between two attempts, in milliseconds. Default 400. */
  readonly maxDelayMs?: number;
}

/** {@link StoreRetryOptions} with every field filled in. */
export type StoreRetryPolicy = Required<StoreRetryOptions>;

/**
 * The default retry: 5 attempts, waiting about 25, 50, 100 and 200 ms between them (each wait drawn
 * between half and all of that), so well under half a second of waiting in all.
 */
export const DEFAULT_STORE_RETRY: StoreRetryPolicy = Object.freeze({
  attempts: 5,
  baseDelayMs: 25,
  maxDelayMs: 400,
});

/** Fills in the defaults; a count is made a whole number of at least 1, a delay at least 0. */
export function storeRetryPolicy(options: StoreRetryOptions = {}): StoreRetryPolicy {
  const whole = (value: number | undefined, fallback: number, least: number) =>
    value === undefined || !Number.isFinite(value) ? fallback : Math.max(least, Math.trunc(value));
  const baseDelayMs = whole(options.baseDelayMs, DEFAULT_STORE_RETRY.baseDelayMs, 0);
  return Object.freeze({
    attempts: whole(options.attempts, DEFAULT_STORE_RETRY.attempts, 1),
    baseDelayMs,
    maxDelayMs: Math.max(baseDelayMs, whole(options.maxDelayMs, DEFAULT_STORE_RETRY.maxDelayMs, 0)),
  });
}
