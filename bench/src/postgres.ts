import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { CallTimings } from "./store-timing.js";

// `--backend postgres`: one PostgreSQL server for both sides. Each scenario gets two schemas of its own,
// made for the run (one per side) and dropped after it, so neither side reads the other's tables or
// anything a previous run left behind.

/** Where the bench looks for the server when neither `--postgres-url` nor `AGBOSS_POSTGRES_URL` says. */
export const DEFAULT_POSTGRES_URL = "postgres://postgres@127.0.0.1:5432/postgres";

/** The `application_name` of the raw LangGraph side's connections, so `--trace-store` can tell the sides apart. */
const LANGGRAPH_APPLICATION_NAME = "agboss-bench:langgraph";

/** Every schema the bench makes starts with this, so a leftover of a killed run is easy to recognise. */
const SCHEMA_PREFIX = "agboss_bench_";

/** The server could not be reached, or refused the bench; the message says what to do. */
export class PostgresUnavailableError extends Error {
  override readonly name = "PostgresUnavailableError";
}

/** The server, database and user of `url`, without the password (for messages). */
export function describeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const database = parsed.pathname.replace(/^\//, "") || "(the user's database)";
    const user = parsed.username === "" ? "" : `${decodeURIComponent(parsed.username)}@`;
    return `${user}${parsed.hostname || "localhost"}:${parsed.port || "5432"}/${database}`;
  } catch {
    return "(an unparsable connection string)";
  }
}

/** `url` with `application_name` set to `name` (pg lets the connection string's value win over the pool's). */
function withApplicationName(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set("application_name", name);
  return parsed.toString();
}

const OTHER_SERVER = `--postgres-url postgres://user:password@host:5432/database (or AGBOSS_POSTGRES_URL); default ${DEFAULT_POSTGRES_URL}`;
const WHAT_IT_NEEDS =
  "The bench creates two schemas per scenario in that database (it needs CREATE on it) and drops them at the end.";

const HOW_TO_START = [
  "Start PostgreSQL, or point the bench at a running server:",
  "  - Debian/Ubuntu cluster: pg_ctlcluster $(ls /etc/postgresql) main start   (or: sudo systemctl start postgresql)",
  "  - Docker: docker run -d --name agboss-bench-pg -p 5432:5432 -e POSTGRES_HOST_AUTH_METHOD=trust postgres:16",
  `  - another server: ${OTHER_SERVER}`,
  WHAT_IT_NEEDS,
].join("\n");

const HOW_TO_POINT = [
  "Point the bench at a database and user it can use (createdb makes a database):",
  `  ${OTHER_SERVER}`,
  WHAT_IT_NEEDS,
].join("\n");

const UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ECONNRESET",
]);

function explain(url: string, error: unknown): PostgresUnavailableError {
  const code = (error as { code?: unknown } | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  const where = describeUrl(url);
  if (typeof code === "string" && UNREACHABLE_CODES.has(code))
    return new PostgresUnavailableError(
      `PostgreSQL is not reachable at ${where} (${code}).\n${HOW_TO_START}`,
    );
  if (/timeout/i.test(message))
    return new PostgresUnavailableError(
      `PostgreSQL did not answer at ${where} in time (${message}).\n${HOW_TO_START}`,
    );
  if (code === "3D000")
    return new PostgresUnavailableError(
      `PostgreSQL at ${where} answered, but the database does not exist (${message}).\n${HOW_TO_POINT}`,
    );
  if (code === "28P01" || code === "28000")
    return new PostgresUnavailableError(
      `PostgreSQL at ${where} refused the login (${message}).\n${HOW_TO_POINT}`,
    );
  return new PostgresUnavailableError(`could not open PostgreSQL at ${where}: ${message}.\n${HOW_TO_START}`);
}

/** The server as both sides of a scenario see it. */
export interface PostgresTarget {
  /** The connection string the AGBoss store opens its pool on. */
  readonly url: string;
  /** The same server and database, with the raw LangGraph side's own `application_name`. */
  readonly langgraphUrl: string;
  /** The schema made for each side. */
  readonly schemas: { readonly agboss: string; readonly langgraph: string };
  /** Where and on what the scenario runs, for its notes. */
  readonly describe: string;
}

/**
 * The bench's own connection to the server: checks it is there before anything runs, reads the
 * settings that decide durability, and creates and drops the schemas each scenario runs in.
 */
export class PostgresServer {
  readonly #client: pg.Client;
  readonly #created = new Set<string>();
  readonly #run = `${randomBytes(3).toString("hex")}`;

  private constructor(
    readonly url: string,
    client: pg.Client,
    /** Server version and the settings that decide what a commit costs, e.g. `PostgreSQL 15.20, synchronous_commit=on, fsync=on`. */
    readonly facts: string,
  ) {
    this.#client = client;
  }

  /** Connects (5 s at most) or throws {@link PostgresUnavailableError} saying how to start a server. */
  static async connect(url: string): Promise<PostgresServer> {
    let client: pg.Client;
    try {
      client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
    } catch (error) {
      throw explain(url, error);
    }
    // A connection that breaks later must not crash the process; the next query reports it.
    client.on("error", () => {});
    try {
      await client.connect();
      const { rows } = await client.query<{ version: string; sync: string; fsync: string }>(
        "select current_setting('server_version') as version, current_setting('synchronous_commit') as sync, current_setting('fsync') as fsync",
      );
      const row = rows[0];
      const facts =
        row === undefined
          ? "PostgreSQL"
          : `PostgreSQL ${row.version}, synchronous_commit=${row.sync}, fsync=${row.fsync}`;
      return new PostgresServer(url, client, facts);
    } catch (error) {
      await client.end().catch(() => {});
      throw explain(url, error);
    }
  }

  /** Creates one empty schema per side for `scenarioId`; fails if one already exists (it must be fresh). */
  async freshTarget(scenarioId: string): Promise<PostgresTarget> {
    const base = `${SCHEMA_PREFIX}${this.#run}_${scenarioId.replace(/[^a-z0-9]+/g, "_")}`;
    const schemas = { agboss: `${base}_agboss`, langgraph: `${base}_langgraph` };
    for (const schema of [schemas.agboss, schemas.langgraph]) {
      await this.#client.query(`create schema ${quote(schema)}`);
      this.#created.add(schema);
    }
    return {
      url: this.url,
      langgraphUrl: withApplicationName(this.url, LANGGRAPH_APPLICATION_NAME),
      schemas,
      describe: `${describeUrl(this.url)} (${this.facts})`,
    };
  }

  /**
   * Creates one empty schema named after `scenarioId` and `label` (e.g. `…_recovery_seed`), for a
   * scenario that needs schemas of its own rather than one per side; dropped by {@link dropSchema} or
   * {@link close}.
   */
  async freshSchema(scenarioId: string, label: string): Promise<string> {
    const schema = `${SCHEMA_PREFIX}${this.#run}_${scenarioId}_${label}`.replace(/[^a-z0-9_]+/g, "_");
    await this.#client.query(`create schema ${quote(schema)}`);
    this.#created.add(schema);
    return schema;
  }

  /** Drops one schema made by {@link freshSchema} and everything in it. */
  async dropSchema(schema: string): Promise<void> {
    await this.#client.query(`drop schema if exists ${quote(schema)} cascade`);
    this.#created.delete(schema);
  }

  /** Runs one statement on the bench's own connection (a scenario's checks and copies). */
  query<Row extends Record<string, unknown>>(text: string, values?: unknown[]): Promise<pg.QueryResult<Row>> {
    return this.#client.query<Row>(text, values);
  }

  /** Drops the target's schemas and everything in them. */
  async drop(target: PostgresTarget): Promise<void> {
    for (const schema of [target.schemas.agboss, target.schemas.langgraph]) {
      await this.#client.query(`drop schema if exists ${quote(schema)} cascade`);
      this.#created.delete(schema);
    }
  }

  /** Drops whatever schema is still there (after a failure or an interrupt) and closes the connection. */
  async close(): Promise<void> {
    for (const schema of [...this.#created]) {
      await this.#client.query(`drop schema if exists ${quote(schema)} cascade`).catch(() => {});
      this.#created.delete(schema);
    }
    await this.#client.end().catch(() => {});
  }
}

/** `identifier` as a quoted SQL identifier. */
export function quote(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}

/** The `application_name` the AGBoss store's pool reports for an app, unless the URL sets one. */
export function agbossApplicationName(url: string, appName: string): string {
  return new URL(url).searchParams.get("application_name") ?? `agboss:${appName}`.slice(0, 63);
}

/** The `application_name` the raw LangGraph side's connections report. */
export const langgraphApplicationName = LANGGRAPH_APPLICATION_NAME;

type QueryCallback = (...result: unknown[]) => unknown;
interface TracedClient {
  readonly connectionParameters?: { readonly application_name?: string };
}

/**
 * Counts SQL statements and the time each took to come back (a round trip to the server, the
 * statement and, for `commit`, the WAL flush), per connection `application_name`, by patching pg's
 * `Client.prototype.query`, which both the AGBoss store (through kysely) and `PostgresSaver` use.
 * Returns a function that maps an application name to its timings.
 */
export function tracePostgres(): (applicationName: string) => CallTimings {
  const byName = new Map<string, CallTimings>();
  const timingsOf = (name: string) => {
    let timings = byName.get(name);
    if (timings === undefined) {
      timings = new CallTimings();
      byName.set(name, timings);
    }
    return timings;
  };
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = proto.query;
  proto.query = function timedQuery(this: TracedClient, ...args: unknown[]): unknown {
    const first = args[0];
    const text = typeof first === "string" ? first : ((first as { text?: unknown } | undefined)?.text ?? "");
    const verb = typeof text === "string" ? (text.trim().split(/\s+/, 1)[0]?.toLowerCase() ?? "?") : "?";
    const timings = timingsOf(this.connectionParameters?.application_name ?? "?");
    const label = `sql.${verb || "?"}`;
    const began = performance.now();
    const last = args.at(-1);
    if (typeof last === "function") {
      args[args.length - 1] = (...result: unknown[]) => {
        timings.add(label, performance.now() - began);
        return (last as QueryCallback)(...result);
      };
      return query.apply(this, args);
    }
    const result = query.apply(this, args);
    if (result instanceof Promise) return result.finally(() => timings.add(label, performance.now() - began));
    return result;
  };
  return timingsOf;
}
