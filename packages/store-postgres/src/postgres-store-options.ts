import type { Clock, Logger } from "@agboss/core";
import type { StoreRetryOptions } from "@agboss/store-kysely";
import type { PostgresPool } from "kysely";

/** How to open a {@link PostgresStore}. Every field is optional, but a server must be named somewhere. */
export interface PostgresStoreOptions {
  /**
   * The server and database, e.g. `postgres://agboss:secret@db.internal:5432/refunds`. Defaults to
   * `AGBOSS_POSTGRES_URL`. Ignored when `pool` is given.
   */
  readonly connectionString?: string;
  /**
   * A pool to run on instead of opening one, e.g. a `pg.Pool` the application already has. The store
   * never ends it: `close()` leaves it open for its owner. pg hands back `bigint` columns of such a pool
   * as strings unless its owner set a parser; the store reads them either way.
   */
  readonly pool?: PostgresPool;
  /**
   * The database schema that holds the store's tables, created on first open. Default `public`. Give
   * each application (or each test) its own to keep several stores in one database apart.
   */
  readonly schema?: string;
  /** The application's name, sent as `application_name` by the pool the store opens. `postgresStore()` passes the app's own. */
  readonly appName?: string;
  /** The most connections the pool the store opens keeps. Default 10. */
  readonly maxConnections?: number;
  /** How long the pool the store opens waits for a connection before failing, in milliseconds. Default 10000. */
  readonly connectTimeoutMs?: number;
  /**
   * How long a connection may stay silent before it is given up, in milliseconds. Default 30000 (the
   * lease's lifetime); 0 turns both sides off.
   *
   * - **The server answers nothing** for that long while a statement waits (a connection that broke
   *   without either side hearing of it, a server or network that stopped, a lock held that long by
   *   someone who stopped): the store closes the connection and the statement fails as on a lost
   *   connection, so it is retried where that is safe, and a `commit` in flight is reported as of
   *   unknown outcome, never as failed. Without this a single such connection holds the process's
   *   writes behind it until the operating system gives the connection up, which can take many minutes.
   *   Migrations are never cut short.
   * - **The store leaves a transaction idle** for that long (its process frozen or cut off mid-write):
   *   the server ends that session, which lets go of its row locks, so other instances are not kept
   *   waiting on them. Set as `idle_in_transaction_session_timeout` on the connections of the pool the
   *   store opens; on a pool you pass, set it in that pool's options yourself.
   */
  readonly stallTimeoutMs?: number;
  /**
   * Whether the store runs its statements as named prepared statements, parsed and planned once per
   * connection. Default true. Turn it off when connections go through a pooler that does not keep
   * prepared statements across transactions (PgBouncer in transaction mode before 1.21, or with
   * `max_prepared_statements = 0`).
   */
  readonly preparedStatements?: boolean;
  /**
   * How reads, and write transactions known not to have committed, are retried after a transient fault
   * (a lost connection, a serialization failure, a deadlock, a full server) before the caller gets
   * `StoreUnavailableError`. Default: 5 attempts, waiting 25 ms, doubling up to 400 ms, between them.
   */
  readonly retry?: StoreRetryOptions;
  /**
   * Where to report a lost connection (a warning, `store.connection-lost`): the store listens for
   * `error` on the pool and on its clients, so a dropped connection never ends the process.
   * `postgresStore()` passes the app's own.
   */
  readonly logger?: Logger;
  /** Stamps those reports. `postgresStore()` passes the app's own. */
  readonly clock?: Clock;
}
