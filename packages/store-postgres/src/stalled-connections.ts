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
 * where that is safe. Migrations are never cut short: they may wait on another instance's migration, or
 * build an index over millions of rows, for longer. @internal
 */
export class StallGuard {
  readonly timeoutMs: number;
  /**
   * Called with the server process of a connection just given up (see {@link endStalledBackend}): a
   * backend that was only frozen would otherwise run what it was sent once it thaws, after the store
   * has run it again elsewhere.
   */
  onStall: ((backendPid: number) => void) | undefined;
  #suspended = 0;

  constructor(timeoutMs: number) {
    this.timeoutMs = timeoutMs;
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
 * emits `error` on it (the store's pool watch logs it as `store.connection-lost`); the guard's
 * `onStall` then ends the connection's server process ({@link endStalledBackend}). Time is the monotonic clock's, so a wall-clock step gives nothing up; an event loop blocked
 * for the whole timeout does, as a reply read late looks like none. A statement costs a clock read and
 * two counts; the timer runs only while statements wait. Works on `pg`'s own client, whose socket it
 * reaches; any other client is not watched. @internal
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
    const pid = (client as { processID?: unknown }).processID;
    if (typeof pid === "number") guard.onStall?.(pid);
    socket.destroy(
      Object.assign(
        new Error(
          `PostgreSQL answered nothing on this connection for ${Math.round(now - heard)} ms while a statement ` +
            `waited (the store's stallTimeoutMs is ${timeoutMs}): the connection is given up as stalled ` +
            "(a network or server that stopped, or a lock held that long). What waited on it fails as on " +
            "a lost connection.",
        ),
        { code: STALLED_CODE },
      ),
    );
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
 * Ends the server process of a connection the store gave up as stalled (`pg_terminate_backend`, run on
 * another connection of the pool, which may end backends of its own role), so that what that process
 * was sent never runs late: one that waits for a lock ends at once, and one that was frozen ends as it
 * thaws, before it reads the statement it was sent (the signal is waiting for it). When the server
 * cannot be reached either, nothing more can be done from here: it is logged
 * (`store.stalled-backend-not-ended`), and the server ends the process when it notices the connection
 * gone. Gives up after `timeoutMs`. @internal
 */
export async function endStalledBackend(
  pool: PostgresPool,
  backendPid: number,
  timeoutMs: number,
  logger: Logger | undefined,
  clock: Clock | undefined,
): Promise<void> {
  let client: PostgresPoolClient | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let failure: unknown;
  try {
    const connecting = pool.connect();
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const socket = (client as { connection?: { stream?: { destroy?(): void } } } | undefined)?.connection
          ?.stream;
        socket?.destroy?.();
        reject(new Error(`no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      timer.unref?.();
    });
    // A connection that arrives after the time ran out goes back to the pool.
    void connecting.then(
      (late) => {
        if (client === undefined && failure !== undefined) late.release();
      },
      () => undefined,
    );
    client = await Promise.race([connecting, timedOut]);
    const result = (await Promise.race([
      client.query("select pg_terminate_backend($1) as ended", [backendPid]),
      timedOut,
    ])) as { rows?: { ended?: unknown }[] };
    // False: no such process any more (it ended by itself), or not one this role may end.
    if (result.rows?.[0]?.ended !== true) throw new Error("the server did not end it");
    logger?.log({
      level: LogLevel.Debug,
      event: "store.stalled-backend-ended",
      message: `The PostgreSQL process ${backendPid} of a connection given up as stalled was told to end.`,
      fields: { backendPid },
      at: clock?.now() ?? Date.now(),
    });
  } catch (error) {
    failure = error;
    logger?.log({
      level: LogLevel.Warn,
      event: "store.stalled-backend-not-ended",
      message:
        `The PostgreSQL process ${backendPid} of a connection given up as stalled could not be ended ` +
        `(${error instanceof Error ? error.message : String(error)}): the server ends it once it notices ` +
        "the connection gone, and it may first run what it was sent.",
      fields: { backendPid },
      at: clock?.now() ?? Date.now(),
    });
  } finally {
    clearTimeout(timer);
    // A connection that failed or timed out is not given back for reuse.
    (client as { release(error?: unknown): void } | undefined)?.release(
      failure === undefined ? undefined : true,
    );
  }
}
