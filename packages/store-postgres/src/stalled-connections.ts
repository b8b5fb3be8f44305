import { performance } from "node:perf_hooks";
import { type Clock, type Logger, LogLevel } from "@agboss/core";
import type { PostgresPool, PostgresPoolClient } from "kysely";

/** The error a statement fails with when its connection is given up as stalled; a lost connection's code. */
export const STALLED_CODE = "ETIMEDOUT";

/**
 * How long a store's connections may stay silent, shared by every connection of one store. A server
 * that answers nothing for `timeoutMs` while a statement waits (a connection that broke without either
 * side hearing of it, a server or a network that stopped, a lock held by someone who stopped) has its
 * connection closed by the store: the statement fails as on a lost connection, and the store retries it
 * where that is safe. First the connection's server process is ended ({@link endStalledBackend}), when
 * the connection confirmed it as it opened: a backend that was only frozen would otherwise run what it
 * was sent once it thaws, after the store has run it again elsewhere. Migrations are never cut short:
 * they may wait on another instance's migration, or build an index over millions of rows, for longer.
 * Made by {@link watchStalls}. @internal
 */
export class StallGuard {
  readonly timeoutMs: number;
  /**
   * The server process behind each connection, once the connection confirmed it (`pg_backend_pid()`
   * equal to the process id the server announced): behind a pooler such as PgBouncer the announced id is
   * the pooler's own, and ending "that" process could end someone else's session, so such a connection's
   * process is never ended.
   */
  readonly #backends = new WeakMap<object, number>();
  readonly #endBackend: (backendPid: number) => Promise<void>;
  readonly #stop: () => void;
  readonly #sessionIdle: SessionIdleTimeout | undefined;
  readonly #logger: Logger | undefined;
  readonly #clock: Clock | undefined;
  #suspended = 0;
  #idleNotSetSaid = false;

  constructor(
    timeoutMs: number,
    endBackend: (backendPid: number) => Promise<void>,
    confirmOn: (confirm: (client: unknown) => void) => () => void,
    sessionIdle: SessionIdleTimeout | undefined,
    logger: Logger | undefined,
    clock: Clock | undefined,
  ) {
    this.timeoutMs = timeoutMs;
    this.#endBackend = endBackend;
    this.#logger = logger;
    this.#clock = clock;
    this.#sessionIdle = sessionIdle !== undefined && sessionIdle.ms > 0 ? sessionIdle : undefined;
    this.#stop =
      timeoutMs > 0 || this.#sessionIdle !== undefined
        ? confirmOn((client) => this.#confirm(client))
        : () => undefined;
  }

  /** Whether a silent connection is given up now (not while a migration runs). */
  get watching(): boolean {
    return this.#suspended === 0;
  }

  /** Runs `work` (a migration) with no connection given up for silence meanwhile. */
  async suspendedFor<T>(work: () => Promise<T>): Promise<T> {
    this.#suspended += 1;
    try {
      return await work();
    } finally {
      this.#suspended -= 1;
    }
  }

  /** Ends the server process of `client`, given up as stalled, when it confirmed it; undefined otherwise. */
  endBackendOf(client: object): Promise<void> | undefined {
    const pid = this.#backends.get(client);
    return pid === undefined ? undefined : this.#endBackend(pid);
  }

  /** Stops confirming new connections (on a pool the store does not own, when it closes). */
  stop(): void {
    this.#stop();
  }

  /**
   * Has a new connection confirm its server process, in a query queued ahead of its first use; with a
   * session idle timeout, the same query sets it on a connection that reached PostgreSQL itself.
   */
  #confirm(client: unknown): void {
    const announced = (client as { processID?: unknown }).processID;
    const query = (client as { query?: unknown }).query;
    if (typeof announced !== "number" || typeof query !== "function") return;
    const idle = this.#sessionIdle;
    const [text, values] =
      idle === undefined
        ? ["select pg_backend_pid() as pid", []]
        : [
            // Behind a pooler the announced id is the pooler's: a session setting there would stay on a
            // server connection that other clients go on to use, so nothing is set.
            `select pg_backend_pid() as pid, case when pg_backend_pid() = $1
               then set_config('idle_in_transaction_session_timeout', $2, false) end as idle`,
            [announced, String(idle.ms)],
          ];
    (client as { query(text: string, values: unknown[]): Promise<{ rows: { pid?: unknown }[] }> })
      .query(text, values)
      .then(
        (result) => {
          if (result.rows[0]?.pid === announced) this.#backends.set(client as object, announced);
          else if (idle !== undefined) this.#idleNotSet(idle);
        },
        (error: unknown) => this.#notConfirmed(error),
      );
  }

  /**
   * Notes a connection whose confirmation failed (its connection lost at once, say): its process is
   * not ended when it stalls, and no session idle timeout was set on it.
   */
  #notConfirmed(error: unknown): void {
    this.#logger?.log({
      level: LogLevel.Debug,
      event: "store.connection-not-confirmed",
      message:
        "A new connection could not confirm its server process, so the store will not end that process " +
        `if the connection stalls, and set no session idle timeout on it: ${error instanceof Error ? error.message : String(error)}`,
      fields: {},
      at: this.#clock?.now() ?? Date.now(),
    });
  }

  /** Says once that the pool's connections go through a pooler, where the idle timeout is not set. */
  #idleNotSet(idle: SessionIdleTimeout): void {
    if (this.#idleNotSetSaid) return;
    this.#idleNotSetSaid = true;
    this.#logger?.log({
      level: idle.given ? LogLevel.Warn : LogLevel.Debug,
      event: "store.idle-timeout-not-set",
      message:
        "The store's connections go through a pooler (such as PgBouncer), so the server is not asked to " +
        `end a session left idle in a transaction (idleInTransactionTimeoutMs ${idle.ms}). Set the ` +
        "pooler's own timeout for that (PgBouncer: idle_transaction_timeout).",
      fields: { idleInTransactionTimeoutMs: idle.ms },
      at: this.#clock?.now() ?? Date.now(),
    });
  }
}

/**
 * `idle_in_transaction_session_timeout` for each connection of the pool the store opens, in
 * milliseconds (0: not set). `given` when the application chose it (then a pooler that keeps it from
 * being set is worth a warning). @internal
 */
export interface SessionIdleTimeout {
  readonly ms: number;
  readonly given: boolean;
}

/**
 * The {@link StallGuard} of a store on `pool`: each new connection of the pool confirms its server
 * process, and a stalled one's process is ended on a connection of its own. With `sessionIdle`, each
 * connection that reached PostgreSQL itself is also asked to end its session when it sits idle in a
 * transaction that long. Nothing is confirmed when `timeoutMs` is 0 (stalls not watched) and no session
 * idle timeout is set. @internal
 */
export function watchStalls(
  pool: PostgresPool,
  timeoutMs: number,
  logger: Logger | undefined,
  clock: Clock | undefined,
  sessionIdle?: SessionIdleTimeout,
): StallGuard {
  const emitter = pool as unknown as {
    on?(event: "connect", listener: (client: unknown) => void): unknown;
    off?(event: "connect", listener: (client: unknown) => void): unknown;
  };
  return new StallGuard(
    timeoutMs,
    (backendPid) => endStalledBackend(pool, backendPid, timeoutMs, logger, clock),
    (confirm) => {
      if (typeof emitter.on !== "function") return () => undefined;
      emitter.on("connect", confirm);
      return () => emitter.off?.("connect", confirm);
    },
    sessionIdle,
    logger,
    clock,
  );
}

/** What a connection's statements tell the watch: one was sent, one was answered. */
export interface ReplyWatch {
  sent(): void;
  answered(): void;
}

/** A watch that gives nothing up: no timeout set, or a client whose socket the store cannot reach. */
const UNWATCHED: ReplyWatch = { sent() {}, answered() {} };

/**
 * Watches `client`'s statements: while one waits, a timer looks every quarter of the guard's timeout
 * whether the server answered anything in the last full timeout, and when it has not, destroys the
 * client's socket with an error of code {@link STALLED_CODE}. `pg` then fails whatever waits on the
 * connection with that error, marks the client unusable (the pool drops it when it comes back) and
 * emits `error` on it (the store's pool watch logs it as `store.connection-lost`). Before that the
 * guard ends the connection's server process, when it can ({@link StallGuard.endBackendOf}), and the
 * socket is destroyed once that settled. Time is the monotonic clock's, so a wall-clock step gives
 * nothing up; an event loop blocked for the whole timeout does, as a reply read late looks like none.
 * A statement costs a clock read and two counts; the timer runs only while statements wait. Works on
 * `pg`'s own client, whose socket it reaches; any other client is not watched. @internal
 */
export function replyWatchOf(client: PostgresPoolClient, guard: StallGuard | undefined): ReplyWatch {
  const socket = (client as { connection?: { stream?: Destroyable } }).connection?.stream;
  if (guard === undefined || guard.timeoutMs <= 0 || typeof socket?.destroy !== "function") return UNWATCHED;
  const { timeoutMs } = guard;
  let waiting = 0;
  // When the server last answered, or when a statement was sent to a connection with none waiting.
  let heard = 0;
  let timer: ReturnType<typeof setInterval> | undefined;
  const look = () => {
    if (waiting === 0) {
      clearInterval(timer);
      timer = undefined;
      return;
    }
    const now = performance.now();
    if (!guard.watching) {
      heard = now;
      return;
    }
    if (now - heard < timeoutMs) return;
    clearInterval(timer);
    timer = undefined;
    waiting = 0;
    // The server process is ended first, and only then does what waits here fail (and run again
    // elsewhere): a process that was only frozen must not run it late, after the store ran it again.
    const ending = guard.endBackendOf(client);
    const stalled = Math.round(now - heard);
    const giveUp = () =>
      socket.destroy(
        Object.assign(
          new Error(
            `PostgreSQL answered nothing on this connection for ${stalled} ms while a statement ` +
              `waited (the store's stallTimeoutMs is ${timeoutMs}): the connection is given up as stalled ` +
              "(a network or server that stopped, or a lock held that long). What waited on it fails as on " +
              "a lost connection.",
          ),
          { code: STALLED_CODE },
        ),
      );
    if (ending === undefined) giveUp();
    else void ending.finally(giveUp);
  };
  return {
    sent() {
      if (waiting === 0) heard = performance.now();
      waiting += 1;
      if (timer === undefined) {
        timer = setInterval(look, Math.max(1, Math.floor(timeoutMs / 4)));
        timer.unref?.();
      }
    },
    answered() {
      if (waiting === 0) return;
      waiting -= 1;
      heard = performance.now();
    },
  };
}

interface Destroyable {
  destroy(error?: Error): void;
}

/**
 * Ends the server process of a connection the store gave up as stalled (`pg_terminate_backend`), so
 * that what that process was sent never runs late: one that waits for a lock ends at once, and one that
 * was frozen ends as it thaws, before it reads what it was sent (the signal waits for it). It runs on a
 * connection of its own, made with the pool's settings outside the pool (whose other connections may be
 * as dead as the stalled one), that only a process of the same user and application name is ended, and
 * gives up after `timeoutMs`. When the server cannot be reached for it either, a warning says so
 * (`store.stalled-backend-not-ended`): the server ends the process when it notices the connection gone,
 * and may first run what it was sent. @internal
 */
export async function endStalledBackend(
  pool: PostgresPool,
  backendPid: number,
  timeoutMs: number,
  logger: Logger | undefined,
  clock: Clock | undefined,
): Promise<void> {
  const Client = (pool as { Client?: new (options: object) => TerminatingClient }).Client;
  const log = (level: LogLevel, event: string, message: string) =>
    logger?.log({ level, event, message, fields: { backendPid }, at: clock?.now() ?? Date.now() });
  if (Client === undefined) return;
  const client = new Client({
    ...(pool as { options?: object }).options,
    connectionTimeoutMillis: timeoutMs,
  });
  client.on?.("error", () => undefined);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    timer.unref?.();
  });
  try {
    const ended = await Promise.race([
      client
        .connect()
        .then(() =>
          client.query(
            "select pg_terminate_backend(pid) as ended from pg_stat_activity where pid = $1 and " +
              "usename = current_user and application_name = current_setting('application_name')",
            [backendPid],
          ),
        ),
      timedOut,
    ]);
    if (ended.rows.some((row) => row.ended === true)) {
      log(
        LogLevel.Debug,
        "store.stalled-backend-ended",
        `The PostgreSQL process ${backendPid} of a connection given up as stalled was told to end.`,
      );
    } else {
      log(
        LogLevel.Debug,
        "store.stalled-backend-gone",
        `The PostgreSQL process ${backendPid} of a connection given up as stalled had ended already.`,
      );
    }
  } catch (error) {
    log(
      LogLevel.Warn,
      "store.stalled-backend-not-ended",
      `The PostgreSQL process ${backendPid} of a connection given up as stalled could not be ended ` +
        `(${error instanceof Error ? error.message : String(error)}): the server ends it once it notices ` +
        "the connection gone, and it may first run what it was sent.",
    );
  } finally {
    clearTimeout(timer);
    void client.end().catch(() => undefined);
    // A client still connecting or waiting for its answer is cut off.
    client.connection?.stream?.destroy?.();
  }
}

interface TerminatingClient {
  connect(): Promise<unknown>;
  query(text: string, values: unknown[]): Promise<{ rows: { ended?: unknown }[] }>;
  end(): Promise<unknown>;
  on?(event: string, listener: (...args: unknown[]) => void): unknown;
  readonly connection?: { readonly stream?: { destroy?(): void } };
}
