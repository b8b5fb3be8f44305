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
   * How long the server may answer nothing while a statement waits before the store gives the
   * connection up, in milliseconds: 0 (off), or 100 to 2147483647. Default 30000, the lease's lifetime.
   * Such a connection broke without either side hearing of it (a network that drops packets, a NAT that
   * forgot it), or its server stopped, or its statement waits that long for a lock. The store closes it,
   * and the statement fails as on a lost connection: retried where that is safe, and reported as of
   * unknown outcome when its `commit` was in flight. First the store ends the connection's server
   * process from a connection of its own (`pg_terminate_backend`, which a role may run on its own
   * sessions; only when the connection confirmed its process as it opened, so never behind PgBouncer),
   * so that a server that was only frozen does not run late what it was sent after the store ran it
   * again elsewhere.
   * Without this, one such connection holds the process's writes behind it until the operating system
   * gives it up, which can take many minutes. Migrations are never cut short.
   */
  readonly stallTimeoutMs?: number;
  /**
   * How long a session of the pool the store opens may sit in a transaction without a statement before
   * the server ends it (`idle_in_transaction_session_timeout`), in milliseconds: 0 (off), or 1000 to
   * 2147483647. Default: half of `stallTimeoutMs`, at least 1000 (15000 with its default, and when it is 0). A
   * store process frozen or cut off in the middle of a write then lets go of its row locks after this
   * long, instead of keeping the other instances' writes to the same tree waiting. The store's own
   * transactions never wait on anything but the database. Keep it below `stallTimeoutMs`, so that a
   * statement waiting behind such a session gets its lock before it counts as silent.
   * Set on each connection, as it opens, only when the connection reaches PostgreSQL itself (its
   * `pg_backend_pid()` is the process id the server announced). PgBouncer announces an id of its own,
   * and its server sessions go on to serve other clients, so behind it nothing is set (a
   * `store.idle-timeout-not-set` warning says so when you gave a value): set its own
   * `idle_transaction_timeout`. A pooler that passed the server's id through would not be told apart:
   * set 0 behind one. Not set on a `pool` you pass: set it in that pool's own options.
   */
  readonly idleInTransactionTimeoutMs?: number;
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
