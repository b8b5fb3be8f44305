import type { Clock, Logger } from "@agboss/core";
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
  /** Where to report a connection the pool lost while idle. `postgresStore()` passes the app's own. */
  readonly logger?: Logger;
  /** Stamps those reports. `postgresStore()` passes the app's own. */
  readonly clock?: Clock;
}
