import type { StoreFault } from "./store-faults.js";

/**
 * What one SQL dialect does differently. The repositories read these flags and never ask which
 * database they run on, so a new backend is a dialect plus one of these objects.
 *
 * @example
 * const capabilities: StoreDialectCapabilities = {
 *   beginWriteTransaction: "begin immediate",
 *   lockRowsForUpdate: false,
 *   supportsReturning: true,
 *   blobType: "blob",
 *   lockDatabaseForMigrations: true,
 *   groupCommit: true,
 * };
 */
/**
 * A dialect's table function for the entries of a JSON object held as text, joined to the row that
 * holds it: SQLite's `json_each` (a table-valued function in a join may name the tables before it),
 * or Postgres's `jsonb_each_text` (the text cast to `jsonb`, in a `lateral` join).
 */
export type JsonObjectEntries = "json_each" | "jsonb_each_text";

export interface StoreDialectCapabilities {
  /**
   * The statement that opens a transaction which will write. SQLite needs `begin immediate`: a plain
   * `begin` takes the write lock only at the first write, and two connections upgrading at once deadlock.
   */
  readonly beginWriteTransaction: string;
  /**
   * Whether `select … for update` / `for share` lock the rows they read (Postgres): lease changes lock
   * the lease row for update, fenced writes for share. False where the transaction locks the database.
   */
  readonly lockRowsForUpdate: boolean;
  /** Whether `insert`/`update … returning` is available; otherwise the row is read back in the same transaction. */
  readonly supportsReturning: boolean;
  /** The column type for binary values: `blob` on SQLite, `bytea` on Postgres. */
  readonly blobType: "blob" | "bytea";
  /**
   * Whether migrations run inside {@link beginWriteTransaction} to keep two processes from migrating at
   * once (SQLite, whose kysely migration lock guards one connection only). Postgres uses kysely's advisory lock.
   */
  readonly lockDatabaseForMigrations: boolean;
  /**
   * Whether write transactions that queue up in one store while another runs join it and share its
   * commit, each under a savepoint (SQLite: one connection, one writer at a time, and a disk sync per
   * commit under `synchronous=FULL`). False where transactions should run side by side on a pool.
   */
  readonly groupCommit: boolean;
  /**
   * Whether a table may be declared `without rowid` (SQLite): its rows then live in its primary key's
   * b-tree, so the key is kept once, not in the table and again in the index that enforces it. The
   * store uses it for tables of small rows only (leases, threads): such a table keeps at most about 1 KB
   * of a row in its page and moves the rest to an overflow page of its own.
   */
  readonly withoutRowid?: boolean | undefined;
  /**
   * Whether a `with` clause may hold `insert`, `update` and `delete` statements, all run as one
   * statement on one snapshot (Postgres). The checkpointer then writes a checkpoint with its channel
   * values, the checkpoints it supersedes deleted and the fence checked, as one statement in autocommit:
   * one round trip where a transaction takes a `begin`, a fence check, a statement per table and a
   * `commit`; so are a fenced execution save and the fenced pause changes that are safe to run twice.
   */
  readonly writableCtes?: boolean | undefined;
  /**
   * How a statement turns a JSON object held as text into rows of `key` and `value` (see
   * {@link JsonObjectEntries}), for the checkpointer to read a checkpoint, the channel values it points
   * at and its pending writes in one statement; without it, in three. Worth it where each statement is
   * a round trip (Postgres; a SQLite reached over a network); on a local SQLite file the three indexed
   * reads are quicker than one that expands the origins with `json_each`, so the SQLite store leaves it
   * out.
   */
  readonly jsonObjectEntries?: JsonObjectEntries | undefined;
  /**
   * A statement the driver answers itself, with no round trip, by committing the open transaction right
   * behind the next statement it runs, in the same round trip (Postgres: its prepared `commit` bound and
   * run before the statement's Sync; the server skips it when the statement fails), and then answering
   * the `commit` that follows without one. A pass transaction (see `groupCommit`: false) sends it before
   * a closing write that is one idempotent statement. A statement run after that one, before the
   * `commit`, runs on its own (a read the write makes after it, say). When the statement fails after the
   * `commit` was sent, the driver marks its error with {@link markCommitInFlight}: a lost connection then
   * leaves the outcome unknown.
   */
  readonly commitWithNextStatement?: string | undefined;
  /**
   * What the store puts before the text of a write that returns no rows and whose result nobody reads
   * (a thread's save, an audit entry; a comment, so the text still runs as it is). Inside a transaction
   * the driver may answer such a statement at once, with no rows, and send it in the same round trip as
   * the transaction's next statement or its `commit` (Postgres: bound and run in front of it, before one
   * Sync). Its error then surfaces there, and the transaction does not commit. Outside a transaction the
   * driver runs it as it comes.
   */
  readonly deferUnreadStatement?: string | undefined;
  /**
   * Which of the driver's errors are transient, and how (see {@link StoreFault}): the store retries
   * those, with backoff, where that is safe, and every other error reaches the caller as it was thrown.
   * Without it nothing is retried.
   */
  readonly faultOf?: ((error: unknown) => StoreFault | undefined) | undefined;
}

/** Set on an error met with a transaction's `commit` on its way (see `commitWithNextStatement`). */
const COMMIT_IN_FLIGHT = Symbol.for("agboss.commit-in-flight");
/** Set on an error the driver gave before sending anything: the connection was already gone. */
const NOT_SENT = Symbol.for("agboss.statement-not-sent");
/** Set on an error the server gave a statement held back (see `deferUnreadStatement`). */
const HELD_REFUSED = Symbol.for("agboss.held-statement-refused");

/** Puts `mark` on `error` (an object: anything else cannot carry it) and returns it. */
function marked<T>(error: T, mark: symbol): T {
  if (typeof error === "object" && error !== null) {
    Object.defineProperty(error, mark, { value: true, configurable: true });
  }
  return error;
}

/** Whether `error` carries `mark`. */
function carries(error: unknown, mark: symbol): boolean {
  return typeof error === "object" && error !== null && (error as Record<symbol, unknown>)[mark] === true;
}

/**
 * Marks `error`, met while a statement carrying its transaction's `commit` (`commitWithNextStatement`)
 * was in flight, or the `commit` sent right after it, and throws it: a lost connection then leaves the
 * outcome unknown.
 */
export function markCommitInFlight(error: unknown): never {
  // Refused before it was sent: no `commit` went anywhere.
  if (notSent(error)) throw error;
  throw marked(error, COMMIT_IN_FLIGHT);
}

/**
 * Marks `error` as the driver's refusal to send a statement at all, because its connection had already
 * failed (a connection ended by the server between two statements of a transaction, say), and returns
 * it: even a `commit` refused so surely did not commit, so its transaction may run again whole.
 */
export function markNotSent<T>(error: T): T {
  return marked(error, NOT_SENT);
}

/** Whether the driver marked `error` with {@link markNotSent}. @internal */
export function notSent(error: unknown): boolean {
  return carries(error, NOT_SENT);
}

/** Whether the driver marked `error` with {@link markCommitInFlight}. @internal */
export function commitInFlight(error: unknown): boolean {
  return carries(error, COMMIT_IN_FLIGHT);
}

/**
 * Marks `error` as the server's answer to a statement held back (`deferUnreadStatement`) and sent in
 * front of another, and returns it: the statement it reached with did not run, and is not to blame.
 */
export function markHeldRefused<T>(error: T): T {
  return marked(error, HELD_REFUSED);
}

/** Whether the driver marked `error` with {@link markHeldRefused}. @internal */
export function heldRefused(error: unknown): boolean {
  return carries(error, HELD_REFUSED);
}
