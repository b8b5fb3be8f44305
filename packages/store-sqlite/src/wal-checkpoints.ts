import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type { SqliteHandle } from "./sqlite-handle.js";

/** Where the SQLite store copies its write-ahead log back into the database file. */
export const SqliteWalCheckpoints = {
  /**
   * On a thread of its own, with a connection of its own, while the event loop goes on: commits stop
   * paying for most of the copying. The default for a file the store opens itself.
   */
  Background: "background",
  /**
   * In the commit that fills the log past SQLite's threshold (1,000 pages), as SQLite does by default:
   * that commit waits for the copy and its syncs. Always so for an in-memory database and for a
   * `database` handle passed in.
   */
  Inline: "inline",
} as const;
export type SqliteWalCheckpoints = (typeof SqliteWalCheckpoints)[keyof typeof SqliteWalCheckpoints];

/** When and how often the background checkpointer works. @internal */
export interface WalCheckpointTiming {
  /** How long after the store opens the thread starts: a store open for less never starts one. */
  readonly startAfterMs: number;
  /** How often the thread copies what the log holds while it grows. */
  readonly intervalMs: number;
  /**
   * The log's length, in pages, at which the store's connection checkpoints in its commit, so that the
   * log starts over: by then the thread has copied all but the last few milliseconds' pages.
   */
  readonly restartPages: number;
}

/**
 * A copy every 50 ms while the log grows (the look at an idle log backs off to four times a second); the log
 * starts over from 4,000 pages (16 MB at SQLite's 4 KB pages).
 */
export const WAL_CHECKPOINT_TIMING: WalCheckpointTiming = {
  startAfterMs: 1_000,
  intervalMs: 50,
  restartPages: 4_000,
};

/** SQLite's own threshold, which the store's connection goes back to when the thread is gone. */
const INLINE_AUTOCHECKPOINT_PAGES = 1_000;

/** How soon a connection that was busy when its threshold was to change is asked again. */
const AUTOCHECKPOINT_RETRY_MS = 10;

/** `timing` with every figure a whole number in range (the defaults for what is not). */
export function checkedTiming(timing: Partial<WalCheckpointTiming> | undefined): WalCheckpointTiming {
  const whole = (value: number | undefined, fallback: number, least: number) =>
    value !== undefined && Number.isFinite(value) ? Math.max(least, Math.trunc(value)) : fallback;
  return {
    startAfterMs: whole(timing?.startAfterMs, WAL_CHECKPOINT_TIMING.startAfterMs, 0),
    intervalMs: whole(timing?.intervalMs, WAL_CHECKPOINT_TIMING.intervalMs, 1),
    restartPages: whole(timing?.restartPages, WAL_CHECKPOINT_TIMING.restartPages, 1),
  };
}

/** What the thread tells the store. */
type FromCheckpointer = { readonly type: "ready" } | { readonly type: "failed"; readonly message: string };

// The thread's code, run as a CommonJS script (`eval`) so that it needs no file of its own next to the
// compiled or the TypeScript sources. Its PASSIVE checkpoints copy what the log holds without ever
// waiting for, or blocking, a writer. When a copy catches up with the log between two commits, the next
// commit starts the log over (SQLite's rule); while commits follow each other closely a copy never quite
// does, and the store's connection starts it over by checkpointing in the commit that takes the log to
// `restartPages`, with only the pages since the thread's last copy left to copy.
const CHECKPOINTER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const failed = (error) =>
  parentPort.postMessage({ type: "failed", message: String((error && error.message) || error) });
function run() {
  let db;
  try {
    // No busy wait: a copy that would have to wait is skipped until the next look.
    db = new Database(workerData.file, { fileMustExist: true, timeout: 0 });
    // The store's own durability: a copy syncs the log before and the file after, as the store's would.
    db.pragma("synchronous = " + workerData.synchronous);
    db.pragma("wal_autocheckpoint = 0");
  } catch (error) {
    failed(error);
    if (db !== undefined) db.close();
    parentPort.close();
    return;
  }
  let timer;
  let stopped = false;
  const stop = () => {
    stopped = true;
    clearTimeout(timer);
    if (db.open) db.close();
    parentPort.close();
  };
  // A log that did not move since the last look is looked at less and less often, down to four times a second.
  let wait = workerData.intervalMs;
  let last = -1;
  const copy = () => {
    try {
      const { busy, log, checkpointed } = db.pragma("wal_checkpoint(PASSIVE)")[0];
      // Busy: another connection is checkpointing; that is no sign of an idle log.
      const idle = busy === 0 && log === last && checkpointed === log;
      if (busy === 0) last = log;
      wait = idle ? Math.min(wait * 2, Math.max(workerData.intervalMs, 250)) : workerData.intervalMs;
    } catch (error) {
      // Another connection holds what the copy needs (it is recovering the log, say): next time.
      const code = (error && typeof error.code === "string" && error.code) || "";
      if (!code.startsWith("SQLITE_BUSY") && !code.startsWith("SQLITE_LOCKED")) {
        failed(error);
        stop();
      }
    }
    if (!stopped) timer = setTimeout(copy, wait);
  };
  timer = setTimeout(copy, wait);
  parentPort.on("message", (message) => {
    if (message === "stop") stop();
  });
  parentPort.postMessage({ type: "ready" });
}
run();
`;

/**
 * Copies a file database's write-ahead log into the file on a worker thread, so the store's commits
 * stop paying for most of it. Until the thread is up, and again if it fails or cannot start, the store's
 * connection checkpoints inline as SQLite does by default (every 1,000 pages); while it runs, the
 * connection does so at `restartPages`, where only what the thread has not copied yet is left.
 * @internal
 */
export class WalCheckpointer {
  readonly #database: SqliteHandle;
  readonly #file: string;
  readonly #timing: WalCheckpointTiming;
  readonly #synchronous: string;
  #startTimer: ReturnType<typeof setTimeout> | undefined;
  /** The connection's threshold still to be set, while the connection was busy when it was asked. */
  #pending: { pages: number; timer: ReturnType<typeof setTimeout> } | undefined;
  #worker: Worker | undefined;
  #exited: Promise<void> | undefined;
  #running = false;
  #stopped = false;
  /** Why the thread stopped before the store closed, if it did. */
  #failure: string | undefined;

  constructor(
    database: SqliteHandle,
    file: string,
    synchronous: string,
    timing?: Partial<WalCheckpointTiming>,
  ) {
    this.#database = database;
    this.#file = file;
    this.#synchronous = synchronous;
    this.#timing = checkedTiming(timing);
    this.#startTimer = setTimeout(() => this.#start(), this.#timing.startAfterMs);
    this.#startTimer.unref?.();
  }

  /** Where checkpoints run now: on the thread once it is up, in the store's commits before and after. */
  get mode(): SqliteWalCheckpoints {
    return this.#running ? SqliteWalCheckpoints.Background : SqliteWalCheckpoints.Inline;
  }

  /** Why the thread stopped before the store closed (it could not open the file, say), if it did. */
  get failure(): string | undefined {
    return this.#failure;
  }

  #start(): void {
    this.#startTimer = undefined;
    if (this.#stopped) return;
    let worker: Worker;
    try {
      worker = new Worker(CHECKPOINTER_SOURCE, {
        eval: true,
        // Not the parent's flags: a TypeScript loader or a debugger port is nothing this thread needs.
        execArgv: [],
        workerData: {
          driver: createRequire(import.meta.url).resolve("better-sqlite3"),
          file: this.#file,
          synchronous: this.#synchronous,
          intervalMs: this.#timing.intervalMs,
        },
      });
    } catch (error) {
      // No thread to be had here (the permission model refuses workers, say): SQLite's checkpoints.
      this.#failure = error instanceof Error ? error.message : String(error);
      return;
    }
    // The thread never keeps the process alive.
    worker.unref();
    this.#worker = worker;
    this.#exited = new Promise((resolve) =>
      worker.once("exit", () => {
        this.#fellBack(this.#failure ?? "the checkpoint thread exited");
        resolve();
      }),
    );
    worker.on("message", (message: FromCheckpointer) => {
      if (message.type === "ready") {
        if (this.#stopped) return;
        this.#running = true;
        this.#autocheckpoint(this.#timing.restartPages);
      } else {
        this.#fellBack(message.message);
      }
    });
    worker.on("error", (error) => this.#fellBack(error.message));
  }

  /** The thread is gone while the store is open: commits checkpoint inline again. */
  #fellBack(reason: string): void {
    if (this.#stopped) return;
    this.#failure ??= reason;
    this.#running = false;
    this.#autocheckpoint(INLINE_AUTOCHECKPOINT_PAGES);
  }

  /**
   * Sets the connection's own checkpoint threshold. Never throws (it runs in the thread's event
   * handlers): a connection busy with a statement (rows being streamed, say) is asked again shortly.
   */
  #autocheckpoint(pages: number): void {
    if (this.#pending !== undefined) clearTimeout(this.#pending.timer);
    this.#pending = undefined;
    if (this.#stopped || this.#database.open === false) return;
    try {
      this.#database.pragma(`wal_autocheckpoint = ${pages}`);
    } catch {
      const timer = setTimeout(() => this.#autocheckpoint(pages), AUTOCHECKPOINT_RETRY_MS);
      timer.unref?.();
      this.#pending = { pages, timer };
    }
  }

  /**
   * Ends the thread as a fault would, without telling it, and waits until it is gone: for tests of what
   * the store does then. @internal
   */
  async killThread(): Promise<void> {
    await this.#worker?.terminate();
  }

  /** Stops the thread (it finishes a copy under way, then closes its connection) and waits for it. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#running = false;
    if (this.#startTimer !== undefined) clearTimeout(this.#startTimer);
    if (this.#pending !== undefined) clearTimeout(this.#pending.timer);
    this.#pending = undefined;
    const worker = this.#worker;
    if (worker === undefined) return;
    // Held by the process until it is gone: with nothing else left to run, the process would otherwise
    // end before this returns, and whoever awaits the store's close with it.
    worker.ref();
    worker.postMessage("stop");
    const exited = this.#exited as Promise<void>;
    const late = setTimeout(() => void worker.terminate(), 2_000);
    late.unref?.();
    await exited;
    clearTimeout(late);
  }
}
