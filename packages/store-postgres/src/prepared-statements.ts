import type { PostgresPool, PostgresPoolClient } from "kysely";

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
export function storeClientPool(pool: PostgresPool, options: { readonly prepared: boolean }): PostgresPool {
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
        view = storeClient(client, options.prepared);
        views.set(client, view);
      }
      return view;
    },
    end: () => pool.end(),
  };
}

function storeClient(client: PostgresPoolClient, prepared: boolean): PostgresPoolClient {
  const target = client as unknown as { query: Query };
  const run = (config: unknown, values?: unknown): Promise<unknown> =>
    isSubmittable(config)
      ? // A cursor or a stream reads its rows itself: `pg` gives it no callback.
        (target.query.call(client, config, values) as Promise<unknown>)
      : callbackQuery(target, client, config, values);
  let query: (text: unknown, values?: unknown) => Promise<unknown> = run;
  if (prepared) {
    let names = namesByConnection.get(client);
    if (names === undefined) {
      names = { byText: new Map(), issued: 0 };
      namesByConnection.set(client, names);
    }
    const known = names;
    query = (text, values) => {
      // kysely runs every statement as `query(text, parameters)`; what has no parameters (begin, commit)
      // goes by the simple protocol, and is left unnamed.
      if (typeof text !== "string" || !Array.isArray(values) || values.length === 0) return run(text, values);
      const name = nameOf(known, text);
      if (name === undefined) return run(text, values);
      return run({ name, text, values }).catch((error: unknown) => {
        if (isStalePreparedStatement(error) && known.byText.get(text) === name) known.byText.delete(text);
        throw error;
      });
    };
  }
  return new Proxy(client, {
    get(object, property) {
      if (property === "query") return query;
      const value = Reflect.get(object, property, object);
      return typeof value === "function" ? value.bind(object) : value;
    },
  });
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
