import type { PostgresPool, PostgresPoolClient } from "kysely";

/** How many statements a store names at most; statements past that run unnamed, as before. */
const MAX_NAMED_STATEMENTS = 1_000;

/**
 * The server's error for a prepared statement whose `select *` would now return other columns (a
 * migration changed the table since the statement was prepared on that connection): SQLSTATE `0A000`.
 */
export function isStalePreparedStatement(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return code === "0A000" && typeof message === "string" && message.includes("cached plan must not change");
}

type Query = (this: unknown, config: unknown, values?: unknown, callback?: unknown) => unknown;

/**
 * Gives the store's statements names, so each connection parses and plans a statement once and then
 * only binds and runs it: the server's parse and plan were about half its work per statement, and the
 * store sends the same few dozen statements over and over. A statement is named by its text, so any
 * connection prepares it the first time it runs it there (pg keeps track per connection). At most
 * {@link MAX_NAMED_STATEMENTS} texts are named; later ones run unnamed.
 *
 * A migration that changes a table under a prepared `select *` makes the server refuse the statement
 * once (`cached plan must not change result type`): its text then gets a new name, so the next run
 * prepares it again, and the store's retry runs it again.
 * @internal
 */
export class PreparedStatements {
  readonly #names = new Map<string, string>();
  readonly #patched = new WeakSet<object>();
  #count = 0;

  /** The pool to give kysely: every client it hands out names the statements it runs. */
  wrap(pool: PostgresPool): PostgresPool {
    return {
      ...(pool.Client === undefined ? {} : { Client: pool.Client }),
      options: pool.options,
      connect: async (): Promise<PostgresPoolClient> => {
        const client = await pool.connect();
        this.#patch(client);
        return client;
      },
      end: () => pool.end(),
    };
  }

  #nameOf(text: string): string | undefined {
    const name = this.#names.get(text);
    if (name !== undefined || this.#names.size >= MAX_NAMED_STATEMENTS) return name;
    const fresh = `agboss_${(this.#count++).toString(36)}`;
    this.#names.set(text, fresh);
    return fresh;
  }

  #patch(client: PostgresPoolClient): void {
    if (this.#patched.has(client)) return;
    this.#patched.add(client);
    const target = client as unknown as { query: Query };
    const query = target.query;
    const statements = this;
    target.query = function (this: unknown, config: unknown, values?: unknown, callback?: unknown) {
      // kysely runs every statement as `query(text, parameters)`; what has no parameters (begin, commit)
      // goes by the simple protocol and is left alone, as is every other form of call.
      if (
        typeof config !== "string" ||
        !Array.isArray(values) ||
        values.length === 0 ||
        callback !== undefined
      ) {
        return query.call(this, config, values, callback);
      }
      const name = statements.#nameOf(config);
      if (name === undefined) return query.call(this, config, values);
      const result = query.call(this, { name, text: config, values }) as Promise<unknown>;
      return result.catch((error: unknown) => {
        if (isStalePreparedStatement(error) && statements.#names.get(config) === name) {
          statements.#names.delete(config);
        }
        throw error;
      });
    };
  }
}
