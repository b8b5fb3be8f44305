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

type Query = (this: unknown, config: unknown, values?: unknown) => Promise<unknown>;

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
 * Wraps a pool so that the statements the store runs go as named prepared statements: each connection
 * parses and plans a statement once, then only binds and runs it (the server's parse and plan were about
 * half its work per statement, and the store sends the same few dozen statements over and over). Only
 * the store's own calls are named: the store gets a view of each client whose `query` names the
 * statement, while the client itself, and whatever else uses the pool, stays as it was.
 *
 * A statement's name is given by its connection (`agboss_s<n>`, the n-th text named there). At most
 * {@link MAX_NAMED_STATEMENTS} texts are named per connection; later ones run unnamed.
 *
 * A migration that changes a table under a prepared `select *` makes the server refuse the statement
 * once ({@link isStalePreparedStatement}): the text then gets a new name on that connection, so its next
 * run prepares it again, and the store's retry (which counts the error as transient) runs it again.
 * @internal
 */
export function preparingPool(pool: PostgresPool): PostgresPool {
  return {
    ...(pool.Client === undefined ? {} : { Client: pool.Client }),
    options: pool.options,
    async connect(): Promise<PostgresPoolClient> {
      return preparingClient(await pool.connect());
    },
    end: () => pool.end(),
  };
}

function preparingClient(client: PostgresPoolClient): PostgresPoolClient {
  const target = client as unknown as { query: Query };
  let names = namesByConnection.get(client);
  if (names === undefined) {
    names = { byText: new Map(), issued: 0 };
    namesByConnection.set(client, names);
  }
  const known = names;
  const query = (text: unknown, values?: unknown): Promise<unknown> => {
    // kysely runs every statement as `query(text, parameters)`; what has no parameters (begin, commit)
    // goes by the simple protocol, and is left alone.
    if (typeof text !== "string" || !Array.isArray(values) || values.length === 0) {
      return target.query.call(client, text, values);
    }
    const name = nameOf(known, text);
    if (name === undefined) return target.query.call(client, text, values);
    return target.query.call(client, { name, text, values }).catch((error: unknown) => {
      if (isStalePreparedStatement(error) && known.byText.get(text) === name) known.byText.delete(text);
      throw error;
    });
  };
  return new Proxy(client, {
    get(object, property) {
      if (property === "query") return query;
      const value = Reflect.get(object, property, object);
      return typeof value === "function" ? value.bind(object) : value;
    },
  });
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
