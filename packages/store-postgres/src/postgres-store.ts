import { StoreUnavailableError } from "@agboss/core";
import { type AgbossDatabase, KyselyStore, StoreFault } from "@agboss/store-kysely";
import { Kysely, sql } from "kysely";
import { connectionTarget } from "./connection-target.js";
import { openOwnedPool } from "./owned-pool.js";
import { POSTGRES_CAPABILITIES } from "./postgres-capabilities.js";
import { postgresFaultOf } from "./postgres-faults.js";
import type { PostgresStoreOptions } from "./postgres-store-options.js";
import { storeClientPool } from "./prepared-statements.js";
import { SchemaScopedPostgresDialect } from "./schema-introspector.js";
import { type StallGuard, watchStalls } from "./stalled-connections.js";
import { watchPool } from "./watched-pool.js";

/** The environment variable that names the server when neither `connectionString` nor `pool` is given. */
export const POSTGRES_URL_ENV = "AGBOSS_POSTGRES_URL";

/** How long the server may stay silent by default (`stallTimeoutMs`): the lease's lifetime. */
const DEFAULT_STALL_TIMEOUT_MS = 30_000;
/** The largest timeout PostgreSQL takes (and a timer can be set to). */
const MAX_TIMEOUT_MS = 2_147_483_647;

/** Postgres folds longer identifiers silently, and the migrator would then not find its own schema. */
const MAX_IDENTIFIER_BYTES = 63;

/**
 * Every store contract and the LangGraph checkpointer on PostgreSQL, for several instances of one
 * application over one database. Writes that race (two answers to one pause, two instances taking one
 * lease) are decided by conditional updates and row locks, and every fenced write takes a shared lock on
 * its lease row first, so a holder that lost its lease to another instance fails and writes nothing.
 *
 * A connection that fails (a terminated backend, a failover, a restart) is logged, never thrown at the
 * process; reads, and write transactions that had not sent COMMIT, are retried after such a fault
 * (`retry`), and the caller gets `StoreUnavailableError` once the attempts are spent.
 *
 * @example
 * const store = await PostgresStore.open({ connectionString: "postgres://app@db:5432/refunds", schema: "agboss" });
 * const app = await createApp(App, { store: () => store });
 */
export class PostgresStore extends KyselyStore {
  /** The schema that holds the store's tables. */
  readonly schema: string;
  readonly #stall: StallGuard;

  private constructor(
    config: ConstructorParameters<typeof KyselyStore>[0] & { schema: string; stall: StallGuard },
  ) {
    super(config);
    this.schema = config.schema;
    this.#stall = config.stall;
  }

  /** Brings the schema to the latest version; its statements may wait and run as long as they need. */
  override migrate(): Promise<void> {
    return this.#stall.suspendedFor(() => super.migrate());
  }

  /** Connects, creates the schema if need be, and migrates it. */
  static async open(options: PostgresStoreOptions = {}): Promise<PostgresStore> {
    const schema = checkedSchema(options.schema ?? "public");
    const connectionString =
      options.pool === undefined ? (options.connectionString ?? process.env[POSTGRES_URL_ENV]) : undefined;
    if (options.pool === undefined && (connectionString === undefined || connectionString === "")) {
      throw new StoreUnavailableError(
        `PostgresStore has no server to connect to. Set ${POSTGRES_URL_ENV} (e.g. ` +
          "postgres://user:password@localhost:5432/app), or pass connectionString or pool to " +
          "PostgresStore.open() or postgresStore().",
      );
    }
    const owned = options.pool === undefined;
    const stallTimeoutMs = checkedTimeout(
      "stallTimeoutMs",
      options.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS,
      100,
    );
    const idleInTransactionTimeoutMs = checkedTimeout(
      "idleInTransactionTimeoutMs",
      options.idleInTransactionTimeoutMs ?? defaultIdleTimeout(stallTimeoutMs),
      1_000,
    );
    const pool =
      options.pool ??
      openOwnedPool({
        connectionString: connectionString as string,
        appName: options.appName,
        maxConnections: options.maxConnections,
        connectTimeoutMs: options.connectTimeoutMs,
      });
    const target = connectionTarget(connectionString, options.pool);
    const watched = watchPool(pool, options.logger, options.clock);
    // The session idle timeout only on the pool the store opens: an application's own pool keeps its
    // sessions as it set them.
    const stall = watchStalls(
      pool,
      stallTimeoutMs,
      options.logger,
      options.clock,
      owned
        ? { ms: idleInTransactionTimeoutMs, given: options.idleInTransactionTimeoutMs !== undefined }
        : undefined,
    );
    const db = new Kysely<AgbossDatabase>({
      dialect: new SchemaScopedPostgresDialect(
        {
          pool: storeClientPool(watched.pool, {
            prepared: options.preparedStatements !== false,
            begin: POSTGRES_CAPABILITIES.beginWriteTransaction,
            commitWithNext: POSTGRES_CAPABILITIES.commitWithNextStatement as string,
            deferUnread: POSTGRES_CAPABILITIES.deferUnreadStatement as string,
            stall,
          }),
        },
        schema,
      ),
    });
    const store = new PostgresStore({
      db,
      capabilities: POSTGRES_CAPABILITIES,
      name: `postgres:${target}#${schema}`,
      schema,
      stall,
      retry: options.retry,
      // A borrowed pool stays open for its owner; destroying kysely would end it.
      onClose: owned
        ? () => db.destroy()
        : async () => {
            watched.unwatch();
            stall.stop();
          },
    });
    try {
      await sql`select 1`.execute(db).catch((error: unknown) => {
        throw new StoreUnavailableError(
          `Could not connect to PostgreSQL at ${target}: ${messageOf(error)}. Check that the server is ` +
            `running and that ${owned ? `the connection string (or ${POSTGRES_URL_ENV})` : "the pool"} names it.`,
          { cause: error },
        );
      });
      await store.migrate().catch((error: unknown) => {
        if (postgresFaultOf(error) !== StoreFault.ConnectionLost) throw error;
        throw new StoreUnavailableError(
          `Could not bring the schema "${schema}" at ${target} up to date: the connection was lost ` +
            `(${messageOf(error)}). The pending migrations run in one transaction, so none was left half ` +
            "done: open the store again once the server is reachable.",
          { cause: error },
        );
      });
    } catch (error) {
      await store.close();
      throw error;
    }
    return store;
  }
}

function checkedSchema(schema: string): string {
  if (schema === "" || Buffer.byteLength(schema, "utf8") > MAX_IDENTIFIER_BYTES) {
    throw new StoreUnavailableError(
      `The schema name "${schema}" cannot be used: give a name of 1 to ${MAX_IDENTIFIER_BYTES} bytes.`,
    );
  }
  return schema;
}

/**
 * Half the stall timeout (at least a second), so that a write waiting behind a frozen session's row
 * locks gets them before it counts as silent; 15 s when stalls are not watched.
 */
function defaultIdleTimeout(stallTimeoutMs: number): number {
  return stallTimeoutMs > 0 ? Math.max(1_000, Math.floor(stallTimeoutMs / 2)) : 15_000;
}

function checkedTimeout(name: string, value: number, least: number): number {
  if (value === 0 || (Number.isSafeInteger(value) && value >= least && value <= MAX_TIMEOUT_MS)) return value;
  throw new TypeError(
    `${name} must be 0 (off) or a whole number of milliseconds from ${least} to ${MAX_TIMEOUT_MS}; ` +
      `got ${String(value)}.`,
  );
}

function messageOf(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return messageOf(error.errors[0]);
  if (error instanceof Error) return error.message || (error as { code?: string }).code || error.name;
  return String(error);
}
