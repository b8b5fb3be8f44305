import type { Clock, Logger } from "@agboss/core";
import { LogLevel } from "@agboss/core";
import type { PostgresPool, PostgresPoolClient } from "kysely";

/** What emits `error`: a `pg.Pool` and its clients. */
interface Emitter {
  on(event: string, listener: (...args: never[]) => void): unknown;
  off?(event: string, listener: (...args: never[]) => void): unknown;
}

/** A pool the store runs on, whose lost connections are reported instead of crashing the process. @internal */
export interface WatchedPool {
  /** The pool to give kysely: it watches every client it hands out. */
  readonly pool: PostgresPool;
  /** Stops listening on the pool (its clients keep their listener, which only reports). */
  unwatch(): void;
}

/**
 * Listens for `error` on `pool` and on every client of it the store uses. pg's pool listens on a
 * client only while the client is idle in it: a backend that goes away while the client is checked
 * out (terminated during a query, a failover, a restart) raises `error` on a client nobody listens
 * to, and Node ends the process. Here each such error is logged as a warning; the query that ran on
 * the connection fails on its own, and the store retries it where that is safe. For a pool the store
 * opened as for one it was given: clients connected before the store opened are watched when the
 * store first takes them. @internal
 */
export function watchPool(
  pool: PostgresPool,
  logger: Logger | undefined,
  clock: Clock | undefined,
): WatchedPool {
  const reported = new WeakSet<object>();
  const watched = new WeakSet<object>();
  const report = (error: Error, client: object | undefined, idle: boolean) => {
    if (client !== undefined) {
      if (reported.has(client)) return;
      reported.add(client);
    }
    logger?.log({
      level: LogLevel.Warn,
      event: "store.connection-lost",
      message: idle
        ? `an idle PostgreSQL connection failed and was dropped from the pool: ${error.message}`
        : `a PostgreSQL connection failed while in use and was dropped: ${error.message}. What ran on it ` +
          "fails, and the store retries it where that is safe.",
      fields: { error: error.message },
      at: clock?.now() ?? Date.now(),
    });
  };
  const watch = (client: unknown) => {
    if (!isEmitter(client) || watched.has(client)) return;
    watched.add(client);
    client.on("error", (error: Error) => report(error, client, false));
  };
  // The pool re-emits an idle client's error (and drops the client); a client reported once is not again.
  const onPoolError = (error: Error, client?: unknown) =>
    report(error, typeof client === "object" && client !== null ? client : undefined, true);
  const emitter = isEmitter(pool) ? pool : undefined;
  emitter?.on("error", onPoolError);
  emitter?.on("connect", watch);
  return {
    pool: {
      ...(pool.Client === undefined ? {} : { Client: pool.Client }),
      options: pool.options,
      async connect(): Promise<PostgresPoolClient> {
        const client = await pool.connect();
        watch(client);
        return client;
      },
      end: () => pool.end(),
    },
    unwatch() {
      emitter?.off?.("error", onPoolError);
      emitter?.off?.("connect", watch);
    },
  };
}

function isEmitter(value: unknown): value is Emitter {
  return typeof value === "object" && value !== null && typeof (value as Emitter).on === "function";
}
