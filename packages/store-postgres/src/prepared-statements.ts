import { createRequire } from "node:module";
import { markCommitInFlight, markHeldRefused, markNotSent } from "@agboss/store-kysely";
import type { PostgresPool, PostgresPoolClient } from "kysely";
import pg from "pg";
import { type ReplyWatch, replyWatchOf, type StallGuard } from "./stalled-connections.js";

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
  /** The names of the `begin` and `commit` statements the connection has prepared. */
  readonly controls: Set<string>;
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
 *   A connection whose prepared statements were dropped under it (`DISCARD ALL`, `DEALLOCATE ALL`)
 *   refuses the next one that was named there (SQLSTATE `26000`): its names are then all forgotten, and
 *   given again, fresh, as the statements run next.
 * - With `prepared`, on `pg`'s own client, a transaction's `begin` and `commit` cost no round trip of
 *   their own once the connection has them prepared (its first transaction prepares them): the `begin`
 *   is bound and run in the same batch of messages as the transaction's first statement with
 *   parameters, and the `commit` that a pass transaction asks for with `commitWithNext` in the batch of
 *   its closing statement (see {@link BatchedStatement}); a transaction that ends before its first
 *   statement sends neither. The store runs one statement at a time on a connection, which this relies
 *   on: a statement is sent only once the one before it has answered.
 * - There too, inside a transaction, a statement the store marks as unread (its text begins with
 *   `deferUnread`: a write that returns no rows, whose result nobody reads) is answered at once with no
 *   rows and held back, once the connection has it and the `commit` prepared: it is bound and run in
 *   front of the transaction's next statement, or of its `commit`, in the same batch. Its error, if
 *   any, is then that statement's (or the `commit`'s): the server skips the rest of the batch, and the
 *   transaction does not commit. A `rollback` drops what is held back unsent.
 * - A `commit` the server answers with `ROLLBACK` (the transaction had failed: a statement in it was
 *   refused, and its caller went on) is an error here, never a success: nothing of it was kept.
 * @internal
 */
export function storeClientPool(pool: PostgresPool, options: StoreClientOptions): PostgresPool {
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

/** What the view needs to know of the store's transactions (see {@link storeClientPool}). */
export interface StoreClientOptions {
  /** Whether the store's statements go as named prepared statements. */
  readonly prepared: boolean;
  /** The statement that opens the store's write transactions. */
  readonly begin: string;
  /** The marker a pass transaction sends before its closing statement (`commitWithNextStatement`). */
  readonly commitWithNext: string;
  /** What the store puts before the text of a statement whose result it does not read (`deferUnreadStatement`). */
  readonly deferUnread: string;
  /** When a connection that answers nothing is given up (see {@link replyWatchOf}); never without it. */
  readonly stall?: StallGuard | undefined;
}

function storeClient(client: PostgresPoolClient, options: StoreClientOptions): PostgresPoolClient {
  const target = client as unknown as { query: Query };
  const watch = replyWatchOf(client, options.stall);
  const run = (config: unknown, values?: unknown): Promise<unknown> =>
    isSubmittable(config)
      ? // A cursor or a stream reads its rows itself: `pg` gives it no callback.
        (target.query.call(client, config, values) as Promise<unknown>)
      : callbackQuery(target, client, config, values, watch);
  let known: StatementNames | undefined;
  if (options.prepared) {
    known = namesByConnection.get(client);
    if (known === undefined) {
      known = { byText: new Map(), issued: 0, controls: new Set() };
      namesByConnection.set(client, known);
    }
  }
  const names = known;
  // Batches go only to `pg`'s own client, whose internals `BatchedStatement` builds on (not to the
  // native client, nor to a client of another copy of `pg`).
  const batches =
    client instanceof pg.Client &&
    typeof (client as { connection?: { parsedStatements?: unknown } }).connection?.parsedStatements ===
      "object";
  // The prepared `begin` of the transaction kysely has opened on this view and that has not reached the
  // server yet: it goes with the transaction's first statement.
  let opening: string | undefined;
  // The transaction commits right behind the next statement, in the same round trip.
  let committing = false;
  // A statement carried the transaction's commit: the `commit` that follows is answered here.
  let committed = false;
  // A transaction is open on the connection (its `begin` sent, or held back in `opening`).
  let open = false;
  // Unread statements held back, in order, to go in front of the transaction's next statement.
  let held: Prefix[] = [];
  // The first error a statement of the open transaction met: why a `commit` answered `ROLLBACK`.
  let failure: unknown;
  /** Whether `pg` has `name` prepared on the connection as `text` (so a batch need not parse it). */
  const parsedAs = (name: string, text: string): boolean =>
    batches &&
    (client as unknown as { connection: { parsedStatements: Record<string, string | undefined> } }).connection
      .parsedStatements[name] === text;

  /** Forgets every name of the connection when the server says one of its statements is gone. */
  const forgetIfGone = (error: unknown): never => {
    if (names !== undefined && (error as { code?: unknown } | null)?.code === "26000") {
      names.byText.clear();
      names.controls.clear();
    }
    throw error;
  };
  /** `begin` or `commit`, named (prepared on the connection the first time) when statements are. */
  const control = (text: string): Promise<unknown> => {
    const name = names === undefined ? undefined : nameOf(names, text);
    if (names === undefined || name === undefined) return run(text, []);
    return run({ name, text, values: [] }).then((result) => {
      names.controls.add(name);
      return result;
    }, forgetIfGone);
  };
  /** The name of `text`, a `begin` or `commit`, once the connection has it prepared and takes batches. */
  const preparedControl = (text: string): string | undefined => {
    const name = batches ? names?.byText.get(text) : undefined;
    return name !== undefined && names?.controls.has(name) === true ? name : undefined;
  };
  /**
   * A statement with parameters, named where it can be, with what goes in front of it in its batch (a
   * `begin`, statements held back) and a `commit` behind it.
   */
  const statement = (
    text: string,
    values: unknown[],
    before: readonly Prefix[],
    commit: string | undefined,
  ): Promise<unknown> => {
    const name = names === undefined ? undefined : nameOf(names, text);
    const config = name === undefined ? { text, values } : { name, text, values };
    const sent =
      before.length === 0 && commit === undefined
        ? run(config)
        : callbackQuery(target, client, new BatchedStatement(config, before, commit), undefined, watch);
    return sent.catch((error: unknown) => {
      if (names !== undefined && isStalePreparedStatement(error)) {
        // Which statement of the batch the server refused is not said: each is prepared again.
        for (const { text: stale, statement: staleName } of [...before, { text, statement: name }]) {
          if (staleName !== undefined && names.byText.get(stale) === staleName) names.byText.delete(stale);
        }
      }
      return forgetIfGone(error);
    });
  };
  /** What goes in front of the next statement: the held-back `begin`, then the statements held back. */
  const takeBefore = (): Prefix[] => {
    const before: Prefix[] =
      opening === undefined ? held : [{ statement: opening, text: options.begin, values: [] }, ...held];
    opening = undefined;
    held = [];
    return before;
  };
  /**
   * Holds back `text`, an unread statement, when the connection has it and the `commit` prepared (the
   * `commit` that flushes it must go as a batch) and no statement is to carry the commit; false otherwise.
   */
  const holdBack = (text: string, values: unknown): boolean => {
    const name = names?.byText.get(text);
    if (name === undefined || committing || !parsedAs(name, text) || !Array.isArray(values)) return false;
    if (preparedControl("commit") === undefined) return false;
    let mapped: unknown[];
    try {
      // Turned into what goes on the wire now: what cannot be runs as it comes, and fails there. Bytes
      // are copied: the caller is told done before they are sent, and may reuse its buffer.
      mapped = values.map((value) => {
        const prepared = prepareValue(value);
        return prepared instanceof Uint8Array ? Buffer.from(prepared) : prepared;
      });
    } catch {
      return false;
    }
    held.push({ statement: name, text, values: mapped });
    return true;
  };

  const query = (text: unknown, values?: unknown): Promise<unknown> => {
    // kysely runs every statement as `query(text, parameters)`; what has no parameters goes by the
    // simple protocol, unnamed, but for the store's own `begin` and `commit`.
    const bare = typeof text === "string" && (!Array.isArray(values) || values.length === 0);
    if (bare && text === options.commitWithNext) {
      committing = true;
      return Promise.resolve(emptyResult("select"));
    }
    if (typeof text === "string" && text.startsWith(options.deferUnread)) {
      // One call: nothing the store runs meanwhile on the connection can come between mark and statement.
      const statement = text.slice(options.deferUnread.length);
      if (open && !bare && holdBack(statement, values)) return Promise.resolve(emptyResult("select"));
      return query(statement, values);
    }
    if (bare && (text === "commit" || text === "rollback")) {
      const ended = committed;
      const failed = failure;
      committed = false;
      committing = false;
      open = false;
      failure = undefined;
      if (text === "commit" && held.length > 0) return commitHeld(failed);
      // A rollback sends nothing held back: the server never ran it.
      held = [];
      if (opening !== undefined || (ended && text === "commit")) {
        // Nothing ran since the `begin`, or a statement carried the commit: the server has no
        // transaction to end.
        opening = undefined;
        return Promise.resolve(emptyResult(text));
      }
      if (text === "rollback") return run(text, values);
      return control(text).then((result) => committedOrThrow(result, failed));
    }
    if (bare && text === options.begin) {
      committed = false;
      open = true;
      held = [];
      failure = undefined;
      if (names !== undefined) {
        const name = preparedControl(text);
        if (name === undefined) return control(text);
        opening = name;
        return Promise.resolve(emptyResult("begin"));
      }
    }
    // Any other statement that ends a transaction: nothing is held back from here on.
    if (bare && /^\s*(commit|rollback|end|abort)\b/i.test(text)) open = false;
    const commit = committing;
    committing = false;
    // The `commit` a statement carries, or sends right after it where it cannot go in its batch.
    const commitAfter = (result: unknown) => control("commit").then(() => result, markCommitInFlight);
    const before = takeBefore();
    let sent: Promise<unknown>;
    if (typeof text === "string" && !bare) {
      const commitName = commit ? preparedControl("commit") : undefined;
      sent = statement(text, values as unknown[], before, commitName);
      if (commitName !== undefined) sent = sent.catch(markCommitInFlight);
      else if (commit) sent = sent.then(commitAfter);
    } else {
      // A cursor, or a statement without parameters: what goes in front of it goes on its own first,
      // a held statement's error marked as its own, as in a batch.
      let first: Promise<unknown> = Promise.resolve();
      for (const { statement: name, text: heldText, values: heldValues } of before) {
        const own = heldText === options.begin ? (error: unknown) => error : markHeldRefused;
        first = first.then(() =>
          run({ name, text: heldText, values: heldValues }).catch((error: unknown) =>
            forgetIfGone(own(error)),
          ),
        );
      }
      sent = first.then(() => run(text, values));
      if (commit) sent = sent.then(commitAfter);
    }
    if (open) {
      sent = sent.catch((error: unknown) => {
        failure ??= error;
        throw error;
      });
    }
    if (!commit) return sent;
    // Until the transaction's own `commit` or `rollback`, what runs here runs on its own: the
    // transaction is committed.
    open = false;
    return sent.then((result) => {
      committed = true;
      return result;
    });
  };
  /** The transaction's `commit`, with the statements held back (and a held-back `begin`) in its batch. */
  // Held only once the connection has the `commit` prepared (see holdBack): it goes by its name.
  const commitHeld = (failed: unknown): Promise<unknown> =>
    statement("commit", [], takeBefore(), undefined).then((result) => committedOrThrow(result, failed));

  return new Proxy(client, {
    get(object, property) {
      if (property === "query") return query;
      const value = Reflect.get(object, property, object);
      if (property === "release" && typeof value === "function") {
        return (...args: unknown[]) => {
          // Back to the pool with nothing waiting to open or commit on the connection.
          opening = undefined;
          committing = false;
          committed = false;
          open = false;
          held = [];
          failure = undefined;
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

/**
 * The result of a `commit`, or the error it is when the server answered `ROLLBACK`: the transaction had
 * failed (a statement in it was refused, and its caller went on), so nothing of it was kept.
 */
function committedOrThrow(result: unknown, cause: unknown): unknown {
  if ((result as { command?: unknown } | null)?.command !== "ROLLBACK") return result;
  const why = cause instanceof Error ? ` (${cause.message})` : "";
  throw Object.assign(
    new Error(
      `The transaction could not commit: a statement in it had failed${why}, so the server rolled it ` +
        "back and nothing of it was kept.",
      cause === undefined ? undefined : { cause },
    ),
    { code: "25P02" },
  );
}

/** The parts of `pg`'s connection that {@link BatchedStatement} writes to. */
interface ProtocolWriter {
  bind(config: {
    readonly statement: string;
    readonly values?: readonly unknown[];
    readonly valueMapper?: (value: unknown) => unknown;
  }): void;
  execute(config: object): void;
  sync(): void;
}

/** The methods of `pg`'s `Query` that {@link BatchedStatement} extends (not in `pg`'s type declarations). */
interface ExtendedQuery {
  prepare(connection: ProtocolWriter): void;
  handleError(error: unknown, connection: ProtocolWriter): void;
  handleCommandComplete(message: unknown, connection: ProtocolWriter): void;
  handleDataRow(message: unknown): void;
}

/** A prepared statement bound and run in front of another in its batch: a `begin`, or a statement held back. */
interface Prefix {
  /** Its name on the connection, which has it prepared. */
  readonly statement: string;
  readonly text: string;
  readonly values: readonly unknown[];
}

const PgQuery = pg.Query as unknown as new (config: object) => ExtendedQuery;

/**
 * How `pg` turns a parameter into what it sends (dates, buffers, arrays, JSON), for the statements a
 * {@link BatchedStatement} binds itself; the same function `pg`'s own `Query` hands its connection.
 */
const prepareValue = (
  createRequire(import.meta.url)("pg/lib/utils.js") as {
    prepareValue: (value: unknown) => unknown;
  }
).prepareValue;

/**
 * A statement sent with prepared statements bound and run in front of it (its transaction's `begin`,
 * the statements held back before it), or its transaction's prepared `commit` behind it, or both, in
 * one batch of messages before one Sync: none of them costs a round trip of its own. The server runs
 * them in order and, once one fails, skips the rest up to the Sync: a statement never runs outside its
 * transaction, and a transaction whose statement failed is not committed. The caller gets the first
 * error, or the statement's result.
 */
class BatchedStatement extends PgQuery {
  readonly #before: readonly Prefix[];
  readonly #commit: string | undefined;
  /** How many commands completed so far: those in front, the statement, the `commit`. */
  #completed = 0;

  constructor(config: object, before: readonly Prefix[], commit: string | undefined) {
    // Always by the extended protocol: its messages are where the others go.
    super({ ...config, queryMode: "extended" });
    this.#before = before;
    this.#commit = commit;
  }

  /** An error met before the statement's turn is a statement in front's: marked so (see markHeldRefused). */
  override handleError(error: unknown, connection: ProtocolWriter): void {
    super.handleError(this.#completed < this.#before.length ? markHeldRefused(error) : error, connection);
  }

  /** Rows of a statement in front (none is expected: they return none) are not the statement's. */
  override handleDataRow(message: unknown): void {
    if (this.#completed >= this.#before.length) super.handleDataRow(message);
  }

  override prepare(connection: ProtocolWriter): void {
    for (const { statement, values } of this.#before) {
      connection.bind({ statement, values, valueMapper: prepareValue });
      connection.execute({});
    }
    const commit = this.#commit;
    if (commit === undefined) {
      super.prepare(connection);
      return;
    }
    // `pg` ends the statement's messages with its Sync: the `commit` goes just before it, once the
    // statement's Execute is written (a statement whose parameters could not be bound has none).
    let executed = false;
    const writer: ProtocolWriter = Object.create(connection, {
      execute: {
        value: (config: object) => {
          executed = true;
          connection.execute(config);
        },
      },
      sync: {
        value: () => {
          if (executed) {
            connection.bind({ statement: commit });
            connection.execute({});
          }
          connection.sync();
        },
      },
    });
    super.prepare(writer);
  }

  override handleCommandComplete(message: unknown, connection: ProtocolWriter): void {
    const index = this.#completed;
    this.#completed += 1;
    // Only the statement's own completion is one of its results.
    if (index === this.#before.length) super.handleCommandComplete(message, connection);
  }
}

/** Runs one query with a callback, as a promise, under the connection's watch for silence. */
function callbackQuery(
  target: { query: Query },
  client: PostgresPoolClient,
  config: unknown,
  values: unknown,
  watch: ReplyWatch,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    watch.sent();
    try {
      target.query.call(client, config, values, (error, result) => {
        watch.answered();
        if (error === null || error === undefined) resolve(result);
        else reject(isRefusedUnsent(error) ? markNotSent(error) : error);
      });
    } catch (error) {
      // Refused before anything was sent: nothing waits on the connection.
      watch.answered();
      throw error;
    }
  }).catch((error: unknown) => {
    // The error was made while reading the socket: give it the stack of the call that ran the query.
    if (error instanceof Error) Error.captureStackTrace(error);
    throw error;
  });
}

/**
 * `pg`'s refusal of a query on a client whose connection had already failed or been closed: given before
 * anything is written to the socket, so not even a `commit` refused this way was sent.
 */
const REFUSED_UNSENT = [
  /^Client has encountered a connection error and is not queryable$/,
  /^Client was closed and is not queryable$/,
];

function isRefusedUnsent(error: unknown): boolean {
  return error instanceof Error && REFUSED_UNSENT.some((pattern) => pattern.test(error.message));
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
