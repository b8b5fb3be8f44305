import type { PostgresPool, PostgresPoolClient } from "kysely";
import pg from "pg";

/** How many statements one connection keeps named at most; statements past that run unnamed. */
const MAX_NAMED_STATEMENTS = 1_000;

/**
 * The server's error for a prepared statement whose result would now have other columns (a migration
 * changed a table under a prepared `select *` since the statement was prepared on that connection):
 * SQLSTATE `0A000` raised by `RevalidateCachedQuery`. The routine's name is not translated, unlike the
 * message, which is checked too for servers that do not report it.
 */
export function isStalePreparedStatement(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { code, routine, message } = error as { code?: unknown; routine?: unknown; message?: unknown };
  if (code !== "0A000") return false;
  return (
    routine === "RevalidateCachedQuery" ||
    (typeof message === "string" && message.includes("cached plan must not change"))
  );
}

type Query = (this: unknown, config: unknown, values?: unknown, callback?: Callback) => unknown;
type Callback = (error: unknown, result: unknown) => void;

/**
 * The statement names of each connection, by text, shared by every store that uses the connection:
 * stores on one pool never give one name two texts. Kept with the connection, gone with it.
 */
const namesByConnection = new WeakMap<object, StatementNames>();

/** One connection's statement names by text, and how many names it has given out. */
interface StatementNames {
  readonly byText: Map<string, string>;
  issued: number;
  /** The names of `begin` statements the connection has prepared: a transaction can open on the way. */
  readonly begins: Set<string>;
}

/**
 * Wraps a pool so that the store's statements run through a view of each client of its own (the client
 * itself, and whatever else uses the pool, stay as they were):
 *
 * - Each statement is handed to `pg` with a callback. Left to return its own promise, `pg` 8 makes a
 *   page of rows survive the young generation's collections: paging 100,000 rows 100 at a time promoted
 *   30 MB to the old generation and each collection held the event loop 14–25 ms, against none promoted
 *   and 1–2 ms with a callback (measured with `--trace-gc-nvp`; the recovery sweep pages like that).
 * - With `prepared`, each statement with parameters goes as a named prepared statement: a connection
 *   parses and plans it once, then only binds and runs it (parse and plan were about half the server's
 *   work per statement, and the store sends the same few dozen statements over and over). A name is
 *   given by its connection (`agboss_s<n>`, the n-th text named there); at most
 *   {@link MAX_NAMED_STATEMENTS} texts are named per connection, later ones run unnamed. A migration
 *   that changes a table under a prepared `select *` makes the server refuse the statement once
 *   ({@link isStalePreparedStatement}): the text then gets a new name on that connection, so its next
 *   run prepares it again, and the store's retry (which counts the error as transient) runs it again.
 * @internal
 */
export function storeClientPool(
  pool: PostgresPool,
  options: { readonly prepared: boolean; readonly begin: string },
): PostgresPool {
  // One view per client, made the first time the client is lent: kysely keeps its own connection object
  // per client it is given, so a new view on every checkout would cost it a new one each time too.
  const views = new WeakMap<PostgresPoolClient, PostgresPoolClient>();
  return {
    ...(pool.Client === undefined ? {} : { Client: pool.Client }),
    options: pool.options,
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      let view = views.get(client);
      if (view === undefined) {
        view = storeClient(client, options);
        views.set(client, view);
      }
      return view;
    },
    end: () => pool.end(),
  };
}

function storeClient(
  client: PostgresPoolClient,
  options: { readonly prepared: boolean; readonly begin: string },
): PostgresPoolClient {
  const target = client as unknown as { query: Query };
  const run = (config: unknown, values?: unknown): Promise<unknown> =>
    isSubmittable(config)
      ? // A cursor or a stream reads its rows itself: `pg` gives it no callback.
        (target.query.call(client, config, values) as Promise<unknown>)
      : callbackQuery(target, client, config, values);
  let query: (text: unknown, values?: unknown) => Promise<unknown> = run;
  let release: (() => void) | undefined;
  if (options.prepared) {
    let names = namesByConnection.get(client);
    if (names === undefined) {
      names = { byText: new Map(), issued: 0, begins: new Set() };
      namesByConnection.set(client, names);
    }
    const known = names;
    // The prepared `begin` of the transaction kysely has opened on this view and that has not reached
    // the server yet: it goes with the transaction's first statement.
    let opening: string | undefined;
    const prepared = (text: string, values: unknown[], begin: string | undefined): Promise<unknown> => {
      const name = nameOf(known, text);
      const config = name === undefined ? { text, values } : { name, text, values };
      const sent =
        begin === undefined
          ? run(config)
          : callbackQuery(target, client, new StatementAfterBegin(config, begin), undefined);
      return sent.catch((error: unknown) => {
        if (name !== undefined && isStalePreparedStatement(error) && known.byText.get(text) === name) {
          known.byText.delete(text);
        }
        throw error;
      });
    };
    query = (text, values) => {
      // kysely runs every statement as `query(text, parameters)`; what has no parameters (begin, commit)
      // goes by the simple protocol, and is left unnamed, but for the store's own `begin`.
      const bare = typeof text === "string" && (!Array.isArray(values) || values.length === 0);
      const begin = opening;
      if (begin !== undefined) {
        opening = undefined;
        // Nothing ran since the `begin`: there is no transaction on the server to end.
        if (bare && (text === "commit" || text === "rollback")) return Promise.resolve(emptyResult(text));
        if (typeof text === "string" && !bare) return prepared(text, values as unknown[], begin);
        // Anything else (a cursor, a statement without parameters) waits for the `begin` on its own.
        return run({ name: begin, text: options.begin, values: [] }).then(() => query(text, values));
      }
      if (bare && text === options.begin) {
        const name = nameOf(known, text);
        if (name === undefined) return run(text, values);
        if (known.begins.has(name)) {
          opening = name;
          return Promise.resolve(emptyResult("begin"));
        }
        // The first transaction on the connection prepares its `begin`, and waits for it.
        return run({ name, text, values: [] }).then((result) => {
          known.begins.add(name);
          return result;
        });
      }
      if (typeof text !== "string" || bare) return run(text, values);
      return prepared(text, values as unknown[], undefined);
    };
    // A connection goes back to the pool with no transaction waiting to open on it.
    release = () => {
      opening = undefined;
    };
  }
  return new Proxy(client, {
    get(object, property) {
      if (property === "query") return query;
      const value = Reflect.get(object, property, object);
      if (property === "release" && release !== undefined && typeof value === "function") {
        const forget = release;
        return (...args: unknown[]) => {
          forget();
          return Reflect.apply(value, object, args);
        };
      }
      return typeof value === "function" ? value.bind(object) : value;
    },
  });
}

/** What `pg` gives for a statement that returns no rows, for a `begin` or an end not sent to the server. */
function emptyResult(command: string): { command: string; rowCount: null; rows: never[]; fields: never[] } {
  return { command: command.toUpperCase(), rowCount: null, rows: [], fields: [] };
}

/** The parts of `pg`'s connection that {@link StatementAfterBegin} writes to. */
interface ProtocolWriter {
  bind(config: { readonly statement: string }): void;
  execute(config: Record<string, never>): void;
}

/** The methods of `pg`'s `Query` that {@link StatementAfterBegin} extends (not in `pg`'s type declarations). */
interface ExtendedQuery {
  prepare(connection: ProtocolWriter): void;
  handleCommandComplete(message: unknown, connection: ProtocolWriter): void;
}

const PgQuery = pg.Query as unknown as new (config: object) => ExtendedQuery;

/**
 * A transaction's first statement, with the transaction's prepared `begin` bound and run in front of it
 * in the same batch of messages, before one Sync: the transaction costs no round trip of its own. The
 * server runs them in order; had the `begin` failed, it would skip the statement too, so nothing runs
 * outside the transaction, and the statement's caller gets the error.
 */
class StatementAfterBegin extends PgQuery {
  readonly #begin: string;
  #begun = false;

  constructor(config: object, begin: string) {
    super(config);
    this.#begin = begin;
  }

  override prepare(connection: ProtocolWriter): void {
    connection.bind({ statement: this.#begin });
    connection.execute({});
    super.prepare(connection);
  }

  override handleCommandComplete(message: unknown, connection: ProtocolWriter): void {
    // The first command to complete is the `begin`: not one of the statement's results.
    if (!this.#begun) {
      this.#begun = true;
      return;
    }
    super.handleCommandComplete(message, connection);
  }
}

/** Runs one query with a callback, as a promise. */
function callbackQuery(
  target: { query: Query },
  client: PostgresPoolClient,
  config: unknown,
  values: unknown,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    target.query.call(client, config, values, (error, result) =>
      error === null || error === undefined ? resolve(result) : reject(error),
    );
  }).catch((error: unknown) => {
    // The error was made while reading the socket: give it the stack of the call that ran the query.
    if (error instanceof Error) Error.captureStackTrace(error);
    throw error;
  });
}

function isSubmittable(config: unknown): boolean {
  return (
    typeof config === "object" &&
    config !== null &&
    typeof (config as { submit?: unknown }).submit === "function"
  );
}

/** The name of `text` on a connection: the one it has, a new one, or none once the connection is full. */
function nameOf(names: StatementNames, text: string): string | undefined {
  const name = names.byText.get(text);
  if (name !== undefined || names.byText.size >= MAX_NAMED_STATEMENTS) return name;
  // Never a name given before on this connection: a renamed text's old statement is still there.
  const fresh = `agboss_s${names.issued.toString(36)}`;
  names.issued += 1;
  names.byText.set(text, fresh);
  return fresh;
}
