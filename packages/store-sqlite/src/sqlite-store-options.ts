import type { StoreRetryOptions } from "@agboss/store-kysely";
import type { SqliteHandle } from "./sqlite-handle.js";
import type { SqliteSynchronous } from "./sqlite-synchronous.js";
import type { SqliteWalCheckpoints, WalCheckpointTiming } from "./wal-checkpoints.js";

/** How to open a {@link SqliteStore}. Every field is optional. */
export interface SqliteStoreOptions {
  /**
   * The database file. Defaults to `AGBOSS_SQLITE_PATH`, else `./.agboss/data/<appName>.sqlite` under the
   * working directory; the directory is created. Ignored when `database` is given.
   */
  readonly path?: string;
  /** An open better-sqlite3 database to use instead of opening `path`; the store does not close it. */
  readonly database?: SqliteHandle;
  /** The application's name, for the default file name. `sqliteStore()` passes the app's own. */
  readonly appName?: string;
  /**
   * `FULL` (default) syncs every commit, so a power loss keeps every committed pause; in WAL mode
   * `NORMAL` syncs only at checkpoints and can lose the last commits. Choose `NORMAL` for throughput.
   */
  readonly synchronous?: SqliteSynchronous;
  /**
   * Where the write-ahead log is copied back into the file. `background` (default): a worker thread with
   * a connection of its own does most of it, from a second after the store opens, so commits stop
   * paying for it (the log then grows to 4,000 pages, 16 MB, before the store's connection starts it over).
   * `inline`: the commit that fills the log does, as SQLite does by default. A `database` handle passed
   * in, or `:memory:`, is always `inline`. Durability is the same either way (see `synchronous`).
   */
  readonly walCheckpoints?: SqliteWalCheckpoints;
  /** When and how often the background thread works (tests shorten it). @internal */
  readonly walCheckpointTiming?: Partial<WalCheckpointTiming>;
  /**
   * How long a write waits for another connection's lock before failing, in milliseconds. Default 5000.
   * SQLite's own wait, which blocks the thread, is split over the `retry` attempts: each attempt waits
   * up to `busyTimeoutMs / attempts` inside SQLite, and the store waits between attempts without
   * blocking. `0` leaves all the waiting to the retries.
   */
  readonly busyTimeoutMs?: number;
  /**
   * How a read or write transaction refused with `SQLITE_BUSY` or `SQLITE_LOCKED` is retried before the
   * caller gets `StoreUnavailableError`. Default: 5 attempts, waiting 25 ms, doubling up to 400 ms,
   * between them.
   */
  readonly retry?: StoreRetryOptions;
}
