import { randomUUID } from "node:crypto";
import { mkdirSync, realpathSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { type AgbossDatabase, KyselyStore, storeRetryPolicy } from "@agboss/store-kysely";
import Database from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import { cacheStatements } from "./cache-statements.js";
import { SQLITE_CAPABILITIES } from "./sqlite-capabilities.js";
import type { SqliteHandle } from "./sqlite-handle.js";
import type { SqliteStoreOptions } from "./sqlite-store-options.js";
import { SqliteSynchronous } from "./sqlite-synchronous.js";
import { syncStatementsOf } from "./sync-statements.js";
import { SqliteWalCheckpoints, WalCheckpointer } from "./wal-checkpoints.js";
import { acquireWriteGate } from "./write-gates.js";

/** The environment variable that names the default database file. */
export const SQLITE_PATH_ENV = "AGBOSS_SQLITE_PATH";

/**
 * Every store contract and the LangGraph checkpointer on one SQLite file, in WAL mode with foreign
 * keys on and `synchronous=FULL` unless told otherwise. Several processes may share the file: writes
 * begin with `begin immediate` and wait up to `busyTimeoutMs` for each other, in SQLite's busy wait
 * and in retries between which the thread is free; then the caller gets `StoreUnavailableError`.
 *
 * @example
 * const store = await SqliteStore.open({ path: "./data/refunds.sqlite" });
 * const app = await createApp(App, { store: () => store });
 */
export class SqliteStore extends KyselyStore {
  /** The database file, or `:memory:`. */
  readonly path: string;
  /** The background checkpoint thread's handle, for a file the store opened itself. */
  #checkpointer: WalCheckpointer | undefined;

  private constructor(config: ConstructorParameters<typeof KyselyStore>[0] & { path: string }) {
    super(config);
    this.path = config.path;
  }

  /**
   * Where the write-ahead log is checkpointed right now: `background` once the store's thread is up,
   * `inline` before that, after it stopped, and for a store that never has one (see
   * `SqliteStoreOptions.walCheckpoints`).
   */
  get walCheckpoints(): SqliteWalCheckpoints {
    return this.#checkpointer?.mode ?? SqliteWalCheckpoints.Inline;
  }

  /** Why the background checkpoint thread stopped while the store was open, if it did. */
  get walCheckpointFailure(): string | undefined {
    return this.#checkpointer?.failure;
  }

  /** Opens (creating if need be) and migrates the database. */
  static async open(options: SqliteStoreOptions = {}): Promise<SqliteStore> {
    const checkpoints = options.walCheckpoints ?? SqliteWalCheckpoints.Background;
    if (checkpoints !== SqliteWalCheckpoints.Background && checkpoints !== SqliteWalCheckpoints.Inline) {
      throw new TypeError(
        `walCheckpoints must be "background" or "inline", not ${JSON.stringify(checkpoints)}.`,
      );
    }
    const owned = options.database === undefined;
    const database = options.database ?? openDatabase(defaultPath(options));
    const path = database.name;
    const journal = String(database.pragma("journal_mode = WAL", { simple: true })).toLowerCase();
    const synchronous = options.synchronous ?? SqliteSynchronous.Full;
    database.pragma(`synchronous = ${synchronous}`);
    database.pragma("foreign_keys = ON");
    // SQLite's busy wait blocks the thread: each attempt takes its share, the retries wait in between.
    const { attempts } = storeRetryPolicy(options.retry);
    const busyTimeoutMs = Math.max(0, Math.trunc(options.busyTimeoutMs ?? 5_000));
    database.pragma(`busy_timeout = ${Math.ceil(busyTimeoutMs / attempts)}`);

    const inMemory = path === ":memory:" || path === "";
    const file = inMemory ? `memory:${randomUUID()}` : realpathSync(path);
    const gate = acquireWriteGate(file);
    const statements = cacheStatements(database);
    const db = new Kysely<AgbossDatabase>({ dialect: new SqliteDialect({ database: statements }) });
    const store = new SqliteStore({
      db,
      capabilities: SQLITE_CAPABILITIES,
      name: `sqlite:${path}`,
      path,
      writeGate: gate.gate,
      retry: options.retry,
      syncStatements: syncStatementsOf(statements),
      // A handle that cannot say whether a transaction is open gets no reads at once.
      syncIdle:
        typeof database.inTransaction === "boolean" ? () => database.inTransaction === false : undefined,
      onClose: async () => {
        await store.#checkpointer?.stop();
        gate.release();
        if (owned) await db.destroy();
      },
    });
    try {
      await store.migrate();
    } catch (error) {
      await store.close();
      throw error;
    }
    // Started once the file is migrated, and only where there is a log to copy: a handle passed in keeps
    // SQLite's own checkpoints, and a file SQLite would not put in WAL mode keeps its rollback journal.
    if (owned && !inMemory && journal === "wal" && checkpoints === SqliteWalCheckpoints.Background) {
      store.#checkpointer = new WalCheckpointer(database, file, synchronous, options.walCheckpointTiming);
    }
    return store;
  }
}

function defaultPath(options: SqliteStoreOptions): string {
  const configured = options.path ?? process.env[SQLITE_PATH_ENV];
  const path = configured ?? resolve(".agboss", "data", `${options.appName ?? "agboss"}.sqlite`);
  if (path !== ":memory:") mkdirSync(dirname(resolve(path)), { recursive: true });
  return path;
}

function openDatabase(path: string): SqliteHandle {
  return new Database(path) as unknown as SqliteHandle;
}
